// The console's pages for the links the service emails: an invitation
// (/app/accept-invitation#token=…) sets the agent's first password, and
// signs them in; a reset link (/app/reset-password#token=…) sets a new one,
// and the agent signs in with it. The secret stays in the fragment, which
// never reaches a server log; it goes to the API in the body of the call.

import { request } from './api.js';
import { $ } from './util.js';

/** What each link's page asks, and where it sends its answer. */
const KINDS = {
  'accept-invitation': {
    title: 'Choose your password',
    lead: 'You are invited to answer customers on the support desk. Choose the password you will sign in with.',
    submit: 'Set password and sign in',
    path: '/api/v1/auth/invitations/accept',
    asksName: true,
  },
  'reset-password': {
    title: 'Choose a new password',
    lead: 'Your new password replaces the old one and signs you out everywhere.',
    submit: 'Set new password',
    path: '/api/v1/auth/password-reset/confirm',
    asksName: false,
  },
};

/** The link page `pathname` names ('accept-invitation', 'reset-password'), or null. */
export function linkPageOf(pathname) {
  const last = pathname.replace(/\/+$/, '').split('/').pop();
  return Object.hasOwn(KINDS, last) ? last : null;
}

/**
 * Shows the page of link `kind`. `show` brings its form up; `onSignedIn(me)`
 * takes an accepted invitation's session, `onReset()` the set password.
 */
export function openLinkPage(kind, { show, onSignedIn, onReset }) {
  const spec = KINDS[kind];
  const el = {
    form: $('#link-form'),
    title: $('#link-title'),
    lead: $('#link-lead'),
    nameField: $('#link-name-field'),
    name: $('#link-name'),
    password: $('#link-password'),
    repeat: $('#link-repeat'),
    error: $('#link-error'),
    submit: $('#link-submit'),
  };
  const token = new URLSearchParams(location.hash.slice(1)).get('token') ?? '';
  const showError = (message) => {
    el.error.textContent = message;
    el.error.hidden = !message;
  };
  el.title.textContent = spec.title;
  el.lead.textContent = spec.lead;
  el.nameField.hidden = !spec.asksName;
  el.submit.textContent = spec.submit;
  show();
  if (!token) showError('This link is incomplete: open the whole link from the email, or ask for a new one.');

  el.form.addEventListener('submit', async (event) => {
    event.preventDefault();
    showError('');
    if (el.password.value !== el.repeat.value) {
      showError('The two passwords differ: type the same one twice.');
      el.repeat.select();
      return;
    }
    const body = { token, password: el.password.value };
    const name = el.name.value.trim();
    if (spec.asksName && name) body.name = name;
    const label = el.submit.textContent;
    el.submit.disabled = true;
    el.submit.textContent = 'Setting the password…';
    try {
      const answer = await request(spec.path, { method: 'POST', body, cookie: true });
      // The link is spent: the address bar leaves it behind.
      history.replaceState(null, '', './');
      el.password.value = '';
      el.repeat.value = '';
      if (spec.asksName) await onSignedIn(answer);
      else onReset();
    } catch (err) {
      // The API's own words: a used or expired link, a password too short.
      showError(err.message);
      el.password.focus();
    } finally {
      el.submit.disabled = false;
      el.submit.textContent = label;
    }
  });
}
