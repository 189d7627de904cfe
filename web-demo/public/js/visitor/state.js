// What the widget knows: its configuration and the chat in progress (from
// the page address and localStorage), and the state the parts share.

import { hashParams, safeStorage } from '../util.js';

const STORAGE_KEY = 'sd-widget-conversation';
const storage = safeStorage('localStorage');

// --- Configuration from the address -------------------------------------

const params = hashParams();
export const config = {
  widgetKey: params.get('widgetKey')?.trim() || null,
  /** Presence refresh period; `#poll=2` shortens it (tests, demos). */
  pollMs: Math.max(2, Number(params.get('poll')) || 10) * 1000,
};

let conversation = loadConversation();
if (conversation && config.widgetKey && conversation.widgetKey && conversation.widgetKey !== config.widgetKey) {
  conversation = null; // another entity's widget: start afresh
}

// A link from an agent-message email: `#session=<id>&token=<visitorToken>`.
export let openOnLoad = false;
const linkSession = params.get('session');
const linkToken = params.get('token');
if (linkSession && linkToken) {
  const sameAsStored = conversation?.sessionId === linkSession;
  conversation = {
    sessionId: linkSession,
    token: linkToken,
    widgetKey: config.widgetKey ?? (sameAsStored ? conversation.widgetKey : null),
    visitorName: sameAsStored ? conversation.visitorName : null,
  };
  saveConversation(conversation);
  openOnLoad = true;
}
if (!config.widgetKey && conversation?.widgetKey) config.widgetKey = conversation.widgetKey;

// The token must not stay in the address bar (history, screenshots, shares).
{
  const keep = new URLSearchParams();
  if (params.get('widgetKey')) keep.set('widgetKey', params.get('widgetKey'));
  if (params.get('poll')) keep.set('poll', params.get('poll'));
  const hash = keep.toString();
  history.replaceState(null, '', location.pathname + location.search + (hash ? `#${hash}` : ''));
}

function loadConversation() {
  try {
    const saved = JSON.parse(storage.getItem(STORAGE_KEY) ?? 'null');
    return saved?.sessionId && saved?.token ? saved : null;
  } catch {
    return null;
  }
}

export function saveConversation(value) {
  if (value) storage.setItem(STORAGE_KEY, JSON.stringify(value));
  else storage.removeItem(STORAGE_KEY);
}

// --- State ----------------------------------------------------------------

export const state = {
  /** The chat in progress ({sessionId, token, widgetKey, visitorName}), or null. */
  conversation,
  open: false,
  view: null,
  previousView: null,
  keyValid: true,
  presence: null,
  unread: 0,
  closed: false,
  socket: null,
  historyLoaded: false,
  rendered: new Map(), // message id -> <li>
  pending: new Map(), // client id -> {body, li}
  typingTimer: null,
  presenceTimer: null,
  /** PUBLIC agents online (id -> name) from the socket; null while polling. */
  live: null,
};
