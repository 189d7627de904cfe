// Agent console, part one: connect with a TEST API key (kept in this tab's
// memory, or its sessionStorage when "stay connected" is ticked) and pick
// the agent identity. The workspace itself is console.js.

import { ApiError, listOf, request } from './api.js';
import { startConsole } from './console.js';
import { $, h, safeStorage } from './util.js';

const KEY_ITEM = 'sd-agent-key';
const IDENTITY_ITEM = 'sd-agent-identity';
const tabStorage = safeStorage('sessionStorage');

const el = {
  signin: $('#signin'),
  console: $('#console'),
  keyForm: $('#key-form'),
  key: $('#api-key'),
  keyToggle: $('#api-key-toggle'),
  remember: $('#remember'),
  keyError: $('#key-error'),
  keySubmit: $('#key-submit'),
  identityForm: $('#identity-form'),
  existingField: $('#existing-field'),
  existing: $('#existing-user'),
  name: $('#agent-name'),
  email: $('#agent-email'),
  role: $('#agent-role'),
  visibility: $('#agent-visibility'),
  identityError: $('#identity-error'),
  identitySubmit: $('#identity-submit'),
  identityBack: $('#identity-back'),
};

/** The key lives here (memory) for the life of the page. */
const auth = { key: null, entities: [], users: [] };

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

// --- Step 1: the key --------------------------------------------------------

el.keyToggle.addEventListener('click', () => {
  const show = el.key.type === 'password';
  el.key.type = show ? 'text' : 'password';
  el.keyToggle.textContent = show ? 'Hide' : 'Show';
  el.keyToggle.setAttribute('aria-pressed', String(show));
});

el.keyForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  showError(el.keyError, '');
  el.key.removeAttribute('aria-invalid');
  const done = busy(el.keySubmit, 'Checking…');
  try {
    await connect(el.key.value.trim());
    showIdentityStep();
  } catch (err) {
    el.key.setAttribute('aria-invalid', 'true');
    showError(el.keyError, err.message);
    el.key.focus();
  } finally {
    done();
  }
});

async function connect(key) {
  if (!key) throw new Error('Paste your TEST API key.');
  if (key.startsWith('svc_live_')) {
    throw new Error('This is a LIVE key. The demo console accepts TEST keys only, so no live data is touched.');
  }
  if (!key.startsWith('svc_test_')) throw new Error('A TEST key starts with svc_test_.');
  let entities;
  try {
    entities = listOf(await request('/api/v1/entities', { key }));
  } catch (err) {
    if (err.status === 401) throw new Error(`The service refused this key: ${err.message}.`);
    if (err.status === 403) throw new Error(`This key cannot be used here: ${err.message}.`);
    throw err;
  }
  if (entities.length === 0) {
    throw new Error('Your company has no entity yet. Create one with `supportdesk entities create`.');
  }
  auth.key = key;
  auth.entities = entities;
  if (el.remember.checked) tabStorage.setItem(KEY_ITEM, key);
  else tabStorage.removeItem(KEY_ITEM);
  el.key.value = '';
  try {
    auth.users = listOf(await request('/api/v1/users?limit=100', { key })).filter((u) => u.email);
  } catch {
    auth.users = []; // without users:read the agent types a new identity
  }
}

// --- Step 2: who is answering ---------------------------------------------

function showIdentityStep() {
  el.keyForm.hidden = true;
  el.identityForm.hidden = false;
  const saved = readIdentity();
  el.existing.replaceChildren(
    h('option', { value: '' }, 'New agent profile…'),
    ...auth.users.map((u) => h('option', { value: u.id }, `${u.name} · ${u.email}`)),
  );
  el.existingField.hidden = auth.users.length === 0;
  if (saved) {
    el.name.value = saved.name ?? '';
    el.email.value = saved.email ?? '';
    el.role.value = saved.role ?? 'AGENT';
    el.visibility.value = saved.visibility ?? 'PUBLIC';
    if (auth.users.some((u) => u.id === saved.id)) el.existing.value = saved.id;
  }
  (el.existingField.hidden ? el.name : el.existing).focus();
}

el.existing.addEventListener('change', () => {
  const user = auth.users.find((u) => u.id === el.existing.value);
  el.name.value = user?.name ?? '';
  el.email.value = user?.email ?? '';
  if (user?.role) el.role.value = user.role;
});

el.identityBack.addEventListener('click', () => {
  forgetKey();
  el.identityForm.hidden = true;
  el.keyForm.hidden = false;
  el.key.focus();
});

el.identityForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  showError(el.identityError, '');
  const name = el.name.value.trim();
  const email = el.email.value.trim();
  if (!name || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) {
    showError(el.identityError, 'Enter your name and a valid email address.');
    (name ? el.email : el.name).focus();
    return;
  }
  const done = busy(el.identitySubmit, 'Going online…');
  try {
    const me = await resolveUser({ name, email, role: el.role.value });
    me.visibility = el.visibility.value;
    tabStorage.setItem(IDENTITY_ITEM, JSON.stringify(me));
    await enterConsole(me);
  } catch (err) {
    showError(el.identityError, err.message);
  } finally {
    done();
  }
});

/** The chosen user, or a new one; an existing email is reused, not duplicated. */
async function resolveUser({ name, email, role }) {
  const chosen = auth.users.find((u) => u.id === el.existing.value);
  if (chosen && chosen.email.toLowerCase() === email.toLowerCase()) {
    return { id: chosen.id, name, email: chosen.email, role };
  }
  const sameEmail = auth.users.find((u) => u.email.toLowerCase() === email.toLowerCase());
  if (sameEmail) return { id: sameEmail.id, name, email: sameEmail.email, role };
  try {
    const user = await request('/api/v1/users', { method: 'POST', key: auth.key, body: { name, email, role } });
    return { id: user.id, name: user.name, email: user.email, role: user.role ?? role };
  } catch (err) {
    if (err.status === 409) {
      const users = listOf(await request('/api/v1/users?limit=100', { key: auth.key }));
      const existing = users.find((u) => u.email?.toLowerCase() === email.toLowerCase());
      if (existing) return { id: existing.id, name, email: existing.email, role };
    }
    if (err.status === 403) {
      // No users:write: presence registers the agent from the heartbeat.
      return { id: crypto.randomUUID(), name, email, role };
    }
    throw err;
  }
}

function readIdentity() {
  try {
    return JSON.parse(tabStorage.getItem(IDENTITY_ITEM) ?? 'null');
  } catch {
    return null;
  }
}

function forgetKey() {
  auth.key = null;
  tabStorage.removeItem(KEY_ITEM);
}

// --- The console ------------------------------------------------------------

async function enterConsole(me) {
  el.signin.hidden = true;
  el.console.hidden = false;
  await startConsole({
    key: auth.key,
    me,
    entities: auth.entities,
    storage: tabStorage,
    onSignOut: (reason) => {
      forgetKey();
      tabStorage.removeItem(IDENTITY_ITEM);
      el.console.hidden = true;
      el.signin.hidden = false;
      el.identityForm.hidden = true;
      el.keyForm.hidden = false;
      showError(el.keyError, reason ?? '');
      el.key.focus();
    },
  });
}

// A reload of this tab resumes where it was (sessionStorage only).
async function resume() {
  const key = tabStorage.getItem(KEY_ITEM);
  const me = readIdentity();
  if (!key) {
    el.key.focus();
    return;
  }
  try {
    await connect(key);
  } catch (err) {
    forgetKey();
    showError(el.keyError, err instanceof ApiError && err.status === 0 ? err.message : '');
    el.key.focus();
    return;
  }
  if (me?.id) {
    await enterConsole(me);
  } else {
    showIdentityStep();
  }
}

resume();
