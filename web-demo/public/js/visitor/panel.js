// The launcher and the panel: which view shows, open or closed, the unread
// badge. What opening the panel starts (the chat's socket) is handed in by
// the wiring, so the panel does not import the chat that imports it.

import { el } from './dom.js';
import { state, config } from './state.js';

let resumeConversation = () => {};

export function showView(name) {
  for (const [key, view] of Object.entries(el.views)) view.hidden = key !== name;
  if (name !== 'article') state.previousView = name;
  state.view = name;
}

export function currentMainView() {
  if (state.conversation) return 'chat';
  if (!config.widgetKey || !state.keyValid) return 'missing';
  return 'start';
}

export function setOpen(open, { focus = true } = {}) {
  state.open = open;
  el.panel.hidden = !open;
  el.widget.classList.toggle('is-open', open);
  el.launcher.setAttribute('aria-expanded', String(open));
  updateLauncherLabel();
  if (open) {
    state.unread = 0;
    updateUnread();
    showView(currentMainView());
    if (state.conversation) resumeConversation();
    if (focus) focusView();
  } else if (focus) {
    el.launcher.focus();
  }
}

export function focusView() {
  const target = {
    start: el.question,
    chat: el.closed.hidden ? el.input : el.newChat,
    missing: el.close,
    article: el.articleBack,
  }[state.view];
  target?.focus();
}

function updateLauncherLabel() {
  const base = state.open ? 'Close the support chat' : 'Open the support chat';
  el.launcherLabel.textContent = state.unread > 0 ? `${base} (${state.unread} unread)` : base;
}

export function updateUnread() {
  el.unread.hidden = state.unread === 0;
  el.unread.textContent = state.unread > 9 ? '9+' : String(state.unread);
  updateLauncherLabel();
}

export function showMissing(title, text) {
  el.missingTitle.textContent = title;
  if (text) el.missingText.textContent = text;
  if (!state.conversation) showView('missing');
}

/** `onResume` runs when the panel opens on a chat in progress. */
export function wirePanel({ onResume }) {
  resumeConversation = onResume;
  el.launcher.addEventListener('click', () => setOpen(!state.open));
  // The skip link focuses the launcher without touching the address (which
  // carries the widget key).
  document.querySelector('.skip-link')?.addEventListener('click', (event) => {
    event.preventDefault();
    el.launcher.focus();
  });
  el.close.addEventListener('click', () => setOpen(false));
  el.panel.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') {
      event.preventDefault();
      setOpen(false);
    }
  });
}
