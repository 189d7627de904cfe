// Agent console, part one: signing in as oneself. Email and password (and
// then a code when the account has a second factor), or the company's SSO;
// the service answers with its session cookie, and every call after that
// goes with the cookie (and the session's CSRF token on changes). No API
// key ever reaches this page. The workspace itself is console.js.

import { listOf, request } from './api.js';
import { startConsole } from './console.js';
import { linkPageOf, openLinkPage } from './password-link.js';
import { $, safeStorage } from './util.js';

const VISIBILITY_ITEM = 'sd-agent-visibility';
const TEST_ITEM = 'sd-agent-test';
const EMAIL_ITEM = 'sd-agent-email';
const prefs = safeStorage('localStorage');
const tabStorage = safeStorage('sessionStorage');

const el = {
  signin: $('#signin'),
  console: $('#console'),
  notice: $('#signin-notice'),
  loginForm: $('#login-form'),
  email: $('#login-email'),
  password: $('#login-password'),
  visibility: $('#agent-visibility'),
  test: $('#login-test'),
  loginError: $('#login-error'),
  loginSubmit: $('#login-submit'),
  ssoShow: $('#sso-show'),
  totpForm: $('#totp-form'),
  totp: $('#totp-code'),
  totpError: $('#totp-error'),
  totpSubmit: $('#totp-submit'),
  totpBack: $('#totp-back'),
  ssoForm: $('#sso-form'),
  slug: $('#sso-slug'),
  ssoError: $('#sso-error'),
  ssoSubmit: $('#sso-submit'),
  ssoBack: $('#sso-back'),
  linkForm: $('#link-form'),
  linkPassword: $('#link-password'),
};

/** The email and password waiting for their second factor (memory only). */
let awaitingCode = null;

function showError(node, message) {
  node.textContent = message;
  node.hidden = !message;
}

function busy(button, text) {
  const label = button.textContent;
  button.disabled = true;
  button.textContent = text;
  return () => {
    button.disabled = false;
    button.textContent = label;
  };
}

/** Shows one step of the sign-in card ('login', 'totp', 'sso', or 'link': an emailed link's page). */
function showStep(step) {
  el.console.hidden = true;
  el.signin.hidden = false;
  el.loginForm.hidden = step !== 'login';
  el.totpForm.hidden = step !== 'totp';
  el.ssoForm.hidden = step !== 'sso';
  el.linkForm.hidden = step !== 'link';
  const first = { login: el.email.value ? el.password : el.email, totp: el.totp, sso: el.slug, link: el.linkPassword }[step];
  first.focus();
}

el.visibility.value = prefs.getItem(VISIBILITY_ITEM) === 'PRIVATE' ? 'PRIVATE' : 'PUBLIC';
el.test.checked = prefs.getItem(TEST_ITEM) === 'true';
el.email.value = prefs.getItem(EMAIL_ITEM) ?? '';
el.visibility.addEventListener('change', () => prefs.setItem(VISIBILITY_ITEM, el.visibility.value));
el.test.addEventListener('change', () => prefs.setItem(TEST_ITEM, String(el.test.checked)));

/** Why a sign-in failed, in words for the agent. */
function refusal(err) {
  switch (err.code) {
    case 'invalid_credentials':
      return 'That email and password do not match an account.';
    case 'rate_limited':
      return `Too many tries. Wait ${err.retryAfter ?? 60} seconds, then try again.`;
    case 'sso_required':
      return 'Your company signs in with SSO only: use "Sign in with SSO".';
    default:
      return err.message;
  }
}

async function signIn(totp) {
  const body = {
    email: el.email.value.trim(),
    password: el.password.value,
    mode: el.test.checked ? 'test' : 'live',
  };
  if (totp) body.totp = totp;
  return request('/api/v1/auth/login', { method: 'POST', body, cookie: true });
}

el.loginForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  showError(el.loginError, '');
  if (!el.email.value.trim() || !el.password.value) {
    showError(el.loginError, 'Enter your email and password.');
    (el.email.value.trim() ? el.password : el.email).focus();
    return;
  }
  const done = busy(el.loginSubmit, 'Signing in…');
  try {
    const me = await signIn();
    await enter(me);
  } catch (err) {
    if (err.code === 'totp_required') {
      awaitingCode = true;
      el.totp.value = '';
      showError(el.totpError, '');
      showStep('totp');
    } else {
      showError(el.loginError, refusal(err));
      el.password.focus();
    }
  } finally {
    done();
  }
});

el.totpForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const code = el.totp.value.replace(/\s+/g, '');
  if (!awaitingCode || !code) {
    showError(el.totpError, 'Enter the code from your authenticator app.');
    return;
  }
  const done = busy(el.totpSubmit, 'Verifying…');
  try {
    const me = await signIn(code);
    awaitingCode = null;
    await enter(me);
  } catch (err) {
    showError(
      el.totpError,
      err.code === 'totp_required' || err.code === 'invalid_credentials' ? 'That code did not work. Try the current one.' : refusal(err),
    );
    el.totp.select();
  } finally {
    done();
  }
});

el.totpBack.addEventListener('click', () => {
  awaitingCode = null;
  el.password.value = '';
  showStep('login');
});

el.ssoShow.addEventListener('click', () => {
  showError(el.ssoError, '');
  showStep('sso');
});
el.ssoBack.addEventListener('click', () => showStep('login'));

// The provider sends the browser back to the service, which signs the agent
// in and sends it on to this page (`redirect`).
el.ssoForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const slug = el.slug.value.trim().toLowerCase();
  if (!slug) {
    showError(el.ssoError, "Enter your company's short name.");
    return;
  }
  busy(el.ssoSubmit, 'Going to your provider…');
  const redirect = encodeURIComponent(location.pathname);
  location.assign(`/api/v1/auth/sso/${encodeURIComponent(slug)}/start?redirect=${redirect}`);
});

// --- The console ------------------------------------------------------------

/** Opens the console for the signed-in agent (`me`, as /auth/me answers). */
async function enter(me) {
  el.password.value = '';
  prefs.setItem(EMAIL_ITEM, me.user.email);
  const session = { csrf: me.csrfToken };
  const entities = listOf(await request('/api/v1/entities', { cookie: true, csrf: session.csrf }));
  if (entities.length === 0) {
    throw new Error('Your company has no entity yet. Create one with `supportdesk entities create`.');
  }
  el.signin.hidden = true;
  el.console.hidden = false;
  showError(el.notice, '');
  await startConsole({
    me: {
      id: me.user.id,
      name: me.user.name,
      email: me.user.email,
      role: me.user.role,
      roleName: me.user.roleName,
      mode: me.type,
      visibility: el.visibility.value,
    },
    session,
    entities,
    storage: tabStorage,
    onSignOut: (reason) => {
      showError(el.notice, reason ?? '');
      showStep('login');
    },
  });
}

// A signed-in browser (a reload, or back from SSO) goes straight in.
async function resume() {
  let me;
  try {
    me = await request('/api/v1/auth/me', { cookie: true });
  } catch (err) {
    if (err.status !== 401) showError(el.loginError, err.message);
    showStep('login');
    return;
  }
  try {
    await enter(me);
  } catch (err) {
    showError(el.loginError, err.message);
    showStep('login');
  }
}

// An emailed link opens its own page; anything else resumes or signs in.
const linkPage = linkPageOf(location.pathname);
if (linkPage) {
  openLinkPage(linkPage, {
    show: () => showStep('link'),
    onSignedIn: async (me) => {
      try {
        await enter(me);
      } catch (err) {
        showError(el.loginError, err.message);
        showStep('login');
      }
    },
    onReset: () => {
      showStep('login');
      showError(el.notice, 'Your new password is set: sign in with it.');
    },
  });
} else {
  resume();
}
