// The visitor widget. It knows the entity's public widget key (from the page
// address) and, once a chat starts, its own session's visitor token; never
// an API key. Public API: /widget/v1 (sessions, presence, kb). Live chat:
// /api/v1/ws?token=<visitorToken>.

import { request, socketUrl } from './api.js';
import { LiveSocket } from './socket.js';
import { renderMarkdown } from './markdown.js';
import { $, h, clientId, clockTime, debounce, hashParams, initials, safeStorage, throttle } from './util.js';

const STORAGE_KEY = 'sd-widget-conversation';
const TYPING_SHOWN_MS = 4000;
const storage = safeStorage('localStorage');

const el = {
  widget: $('#sd-widget'),
  panel: $('#sd-panel'),
  launcher: $('#sd-launcher'),
  launcherLabel: $('#sd-launcher-label'),
  launcherDot: $('#sd-launcher-dot'),
  unread: $('#sd-unread'),
  close: $('#sd-close'),
  avatars: $('#sd-avatars'),
  presence: $('#sd-presence'),
  presenceDot: $('#sd-presence-dot'),
  presenceText: $('#sd-presence-text'),
  views: {
    missing: $('#sd-view-missing'),
    start: $('#sd-view-start'),
    chat: $('#sd-view-chat'),
    article: $('#sd-view-article'),
  },
  missingTitle: $('#sd-missing-title'),
  missingText: $('#sd-missing-text'),
  question: $('#sd-question'),
  name: $('#sd-name'),
  email: $('#sd-email'),
  startError: $('#sd-start-error'),
  startButton: $('#sd-start'),
  startSuggestions: $('#sd-start-suggestions'),
  chatSuggestions: $('#sd-chat-suggestions'),
  messages: $('#sd-messages'),
  typing: $('#sd-typing'),
  closed: $('#sd-closed'),
  newChat: $('#sd-new-chat'),
  composer: $('#sd-composer'),
  input: $('#sd-input'),
  send: $('#sd-send'),
  conn: $('#sd-conn'),
  articleBack: $('#sd-article-back'),
  articleTitle: $('#sd-article-title'),
  articleCategory: $('#sd-article-category'),
  articleContent: $('#sd-article-content'),
};

// --- Configuration from the address -------------------------------------

const params = hashParams();
const config = {
  widgetKey: params.get('widgetKey')?.trim() || null,
  /** Presence refresh period; `#poll=2` shortens it (tests, demos). */
  pollMs: Math.max(2, Number(params.get('poll')) || 10) * 1000,
};

let conversation = loadConversation();
if (conversation && config.widgetKey && conversation.widgetKey && conversation.widgetKey !== config.widgetKey) {
  conversation = null; // another entity's widget: start afresh
}

// A link from an agent-message email: `#session=<id>&token=<visitorToken>`.
let openOnLoad = false;
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

function saveConversation(value) {
  if (value) storage.setItem(STORAGE_KEY, JSON.stringify(value));
  else storage.removeItem(STORAGE_KEY);
}

// --- State ----------------------------------------------------------------

const state = {
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

// --- Views and panel ------------------------------------------------------

function showView(name) {
  for (const [key, view] of Object.entries(el.views)) view.hidden = key !== name;
  if (name !== 'article') state.previousView = name;
  state.view = name;
}

function currentMainView() {
  if (conversation) return 'chat';
  if (!config.widgetKey || !state.keyValid) return 'missing';
  return 'start';
}

function setOpen(open, { focus = true } = {}) {
  state.open = open;
  el.panel.hidden = !open;
  el.widget.classList.toggle('is-open', open);
  el.launcher.setAttribute('aria-expanded', String(open));
  updateLauncherLabel();
  if (open) {
    state.unread = 0;
    updateUnread();
    showView(currentMainView());
    if (conversation) startConversation();
    if (focus) focusView();
  } else if (focus) {
    el.launcher.focus();
  }
}

function focusView() {
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

function updateUnread() {
  el.unread.hidden = state.unread === 0;
  el.unread.textContent = state.unread > 9 ? '9+' : String(state.unread);
  updateLauncherLabel();
}

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

function showMissing(title, text) {
  el.missingTitle.textContent = title;
  if (text) el.missingText.textContent = text;
  if (!conversation) showView('missing');
}

// --- Presence -------------------------------------------------------------

async function refreshPresence() {
  if (!config.widgetKey) {
    renderPresence(null);
    return;
  }
  try {
    const presence = await request(`/widget/v1/presence?widgetKey=${encodeURIComponent(config.widgetKey)}`);
    state.keyValid = true;
    renderPresence(presence);
  } catch (err) {
    if (err.status === 404 || err.status === 401) {
      state.keyValid = false;
      renderPresence(null);
      showMissing('This widget key is not valid', 'Check the widget key in the page address, or open the widget from the agent console.');
    }
    // Network trouble or rate limiting: keep what we showed, try again later.
  }
}

function renderPresence(presence) {
  state.presence = presence;
  const agents = presence?.agents ?? [];
  const online = Boolean(presence?.online);
  el.presence.dataset.online = String(online);
  el.presenceDot.classList.toggle('dot-ok', online);
  el.launcherDot.classList.toggle('is-online', online);
  el.avatars.replaceChildren(
    ...agents.slice(0, 3).map((agent) => h('span', { class: 'avatar', title: agent.name }, initials(agent.name))),
  );
  let text;
  if (!presence) {
    text = conversation ? 'Continue your conversation' : 'Support chat';
  } else if (online) {
    const names = agents.map((a) => a.name);
    let who;
    if (names.length === 0) who = 'The team is';
    else if (names.length === 1) who = `${names[0]} is`;
    else if (names.length === 2) who = `${names[0]} and ${names[1]} are`;
    else who = `${names[0]}, ${names[1]} and ${names.length - 2} more are`;
    text = `${who} online · we reply in a few minutes`;
  } else {
    text = 'We are away · leave a message and we will reply soon';
  }
  el.presenceText.textContent = text;
}

/** Polls presence while the socket does not bring it live. */
function schedulePresence() {
  clearTimeout(state.presenceTimer);
  if (!state.keyValid) return; // an unknown key stays unknown: stop asking
  state.presenceTimer = setTimeout(async () => {
    if (document.visibilityState === 'visible' && !state.live) await refreshPresence();
    schedulePresence();
  }, config.pollMs);
}

function renderLivePresence() {
  if (!state.live) return;
  const agents = [...state.live.values()].sort().map((name) => ({ name }));
  renderPresence({ online: agents.length > 0, agents });
}

document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') refreshPresence();
});

// --- Knowledge-base suggestions --------------------------------------------

function suggester(section, limit) {
  let controller = null;
  const list = $('.sd-suggestion-list', section);
  const run = debounce(async (text) => {
    controller?.abort();
    if (!config.widgetKey || text.trim().length < 3) {
      section.hidden = true;
      return;
    }
    controller = new AbortController();
    try {
      const query = new URLSearchParams({ widgetKey: config.widgetKey, q: text.trim(), limit: String(limit) });
      const hits = await request(`/widget/v1/kb/search?${query}`, { signal: controller.signal });
      renderSuggestions(section, list, Array.isArray(hits) ? hits.slice(0, limit) : []);
    } catch (err) {
      if (err?.name !== 'AbortError') section.hidden = true;
    }
  }, 250);
  return run;
}

function renderSuggestions(section, list, hits) {
  list.replaceChildren(
    ...hits.map((hit) =>
      h(
        'li',
        {},
        h(
          'button',
          { type: 'button', class: 'sd-suggestion', onclick: () => openArticle(hit) },
          h('span', { class: 'sd-suggestion-title' }, articleIcon(), hit.title),
          hit.excerpt ? h('span', { class: 'sd-suggestion-excerpt' }, hit.excerpt) : null,
        ),
      ),
    ),
  );
  section.hidden = hits.length === 0;
}

function articleIcon() {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('width', '14');
  svg.setAttribute('height', '14');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  const path = document.createElementNS('http://www.w3.org/2000/svg', 'path');
  path.setAttribute('d', 'M6 3h9l4 4v14H6zM14 3v5h5M9 13h7M9 17h5');
  path.setAttribute('fill', 'none');
  path.setAttribute('stroke', 'currentColor');
  path.setAttribute('stroke-width', '1.8');
  path.setAttribute('stroke-linejoin', 'round');
  svg.append(path);
  return svg;
}

async function openArticle(hit) {
  el.articleTitle.textContent = hit.title;
  el.articleCategory.textContent = hit.category?.name ?? '';
  renderMarkdown(el.articleContent, hit.excerpt ?? '');
  showView('article');
  el.articleBack.focus();
  try {
    const query = new URLSearchParams({ widgetKey: config.widgetKey });
    const article = await request(`/widget/v1/kb/articles/${encodeURIComponent(hit.id)}?${query}`);
    el.articleTitle.textContent = article.title;
    renderMarkdown(el.articleContent, article.content || article.excerpt || '');
  } catch {
    // The excerpt stays: better than nothing.
  }
}

el.articleBack.addEventListener('click', () => {
  showView(state.previousView ?? currentMainView());
  focusView();
});

const suggestForQuestion = suggester(el.startSuggestions, 4);
const suggestForComposer = suggester(el.chatSuggestions, 3);
el.question.addEventListener('input', () => suggestForQuestion(el.question.value));

// --- Starting a chat --------------------------------------------------------

el.views.start.addEventListener('submit', async (event) => {
  event.preventDefault();
  const question = el.question.value.trim();
  const visitorName = el.name.value.trim();
  const visitorEmail = el.email.value.trim();
  el.startError.hidden = true;
  el.email.removeAttribute('aria-invalid');
  el.question.removeAttribute('aria-invalid');
  if (!question) {
    return startError('Tell us briefly how we can help.', el.question);
  }
  if (visitorEmail && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(visitorEmail)) {
    return startError('That email address does not look right.', el.email);
  }
  el.startButton.disabled = true;
  el.startButton.textContent = 'Starting…';
  try {
    const body = { widgetKey: config.widgetKey };
    if (visitorName) body.visitorName = visitorName;
    if (visitorEmail) body.visitorEmail = visitorEmail;
    const session = await request('/widget/v1/sessions', { method: 'POST', body });
    conversation = {
      sessionId: session.id,
      token: session.visitorToken,
      widgetKey: config.widgetKey,
      visitorName: session.visitorName ?? visitorName,
    };
    saveConversation(conversation);
    state.historyLoaded = true; // a new session has no history
    resetConversationView();
    showView('chat');
    startConversation();
    sendMessage(question);
    el.question.value = '';
    el.startSuggestions.hidden = true;
    el.input.focus();
  } catch (err) {
    const message =
      err.status === 429
        ? `Too many attempts. Please try again in ${err.retryAfter ?? 'a few'} seconds.`
        : err.status === 404
          ? 'This widget key is not valid.'
          : err.message;
    startError(message);
  } finally {
    el.startButton.disabled = false;
    el.startButton.textContent = 'Start chat';
  }
});

function startError(message, field) {
  el.startError.textContent = message;
  el.startError.hidden = false;
  if (field) {
    field.setAttribute('aria-invalid', 'true');
    field.focus();
  }
}

// --- The conversation -------------------------------------------------------

function resetConversationView() {
  el.messages.replaceChildren();
  state.rendered.clear();
  state.pending.clear();
  setClosed(false);
  hideTyping();
}

async function startConversation() {
  if (state.socket || !conversation) return;
  const current = conversation;
  const socket = new LiveSocket({
    url: async () => socketUrl(`/api/v1/ws?token=${encodeURIComponent(current.token)}`),
    onFrame,
    onStatus: (status, detail) => onSocketStatus(status, detail),
  });
  state.socket = socket;
  if (!state.historyLoaded) {
    const ok = await loadHistory(current);
    if (!ok || conversation !== current) return;
  }
  socket.subscribe(`session:${current.sessionId}`, lastMessageId());
  // Live presence (PUBLIC agents only, the server filters for visitors).
  socket.subscribe('presence');
  socket.start();
}

/** Fetches the session with its messages (a reload, or a link from email). */
async function loadHistory(current) {
  try {
    const session = await request(`/widget/v1/sessions/${encodeURIComponent(current.sessionId)}`, {
      token: current.token,
    });
    state.historyLoaded = true;
    for (const message of session.messages ?? []) renderMessage({ ...message, sessionId: session.id });
    if (session.status === 'CLOSED') setClosed(true);
    scrollToEnd(false);
    return true;
  } catch (err) {
    if (err.status === 401 || err.status === 403 || err.status === 404) {
      forgetConversation('That conversation link has expired. You can start a new chat here.');
    } else {
      el.conn.textContent = 'Could not load the conversation. Retrying…';
      state.socket = null;
      setTimeout(() => state.open && startConversation(), 3000);
    }
    return false;
  }
}

function forgetConversation(notice) {
  state.socket?.stop();
  state.socket = null;
  state.live = null;
  conversation = null;
  state.historyLoaded = false;
  saveConversation(null);
  resetConversationView();
  showView(currentMainView());
  if (notice && state.view === 'start') startError(notice);
}

function lastMessageId() {
  let last = null;
  for (const id of state.rendered.keys()) if (!last || id > last) last = id;
  return last;
}

function onSocketStatus(status, detail) {
  if (status !== 'open') state.live = null; // back to polling until resubscribed
  el.conn.classList.toggle('is-warn', status === 'reconnecting');
  el.conn.dataset.status = status;
  if (status === 'open') {
    el.conn.textContent = '';
  } else if (status === 'connecting') {
    el.conn.textContent = 'Connecting…';
  } else if (status === 'reconnecting') {
    el.conn.textContent = 'Connection lost. Reconnecting…';
    // A refused handshake looks like a drop: check the token now and then.
    if (detail?.attempt && detail.attempt % 3 === 0 && conversation) verifyConversation();
  }
}

async function verifyConversation() {
  const current = conversation;
  try {
    await request(`/widget/v1/sessions/${encodeURIComponent(current.sessionId)}`, { token: current.token });
  } catch (err) {
    if ((err.status === 401 || err.status === 404) && conversation === current) {
      forgetConversation('Your previous conversation has ended. You can start a new chat here.');
    }
  }
}

function onFrame(frame) {
  switch (frame.type) {
    case 'subscribed':
      if (frame.channel === 'presence') {
        // A snapshot of who is online follows, one frame per agent.
        state.live = new Map();
        setTimeout(renderLivePresence, 300);
      }
      break;
    case 'presence': {
      const agent = frame.data;
      if (!agent?.userId) break;
      state.live ??= new Map();
      if (agent.online && agent.visibility !== 'PRIVATE') state.live.set(agent.userId, agent.name);
      else state.live.delete(agent.userId);
      renderLivePresence();
      break;
    }
    case 'chat.message': {
      const message = frame.data;
      if (!message || (message.sessionId && message.sessionId !== conversation?.sessionId)) return;
      if (frame.id && state.pending.has(frame.id)) dropPending(frame.id);
      const isNew = renderMessage(message);
      if (isNew && message.senderType !== 'visitor') {
        hideTyping();
        if (!state.open) {
          state.unread += 1;
          updateUnread();
        }
      }
      break;
    }
    case 'chat.session':
      if (frame.data?.id === conversation?.sessionId) setClosed(frame.data.status === 'CLOSED');
      break;
    case 'typing':
      if (frame.data?.senderType && frame.data.senderType !== 'visitor') showTyping();
      break;
    case 'error':
      if (frame.code === 'session_closed') setClosed(true);
      if (frame.id && state.pending.has(frame.id)) markFailed(frame.id, frame.error);
      else if (frame.code !== 'session_closed') el.conn.textContent = frame.error ?? 'Something went wrong.';
      break;
    default:
      break;
  }
}

/** Adds a message in id order (ids are time-ordered); false if already shown. */
function renderMessage(message) {
  if (!message?.id || state.rendered.has(message.id)) return false;
  if (message.senderType === 'visitor') {
    for (const [cid, pending] of state.pending) {
      if (pending.body === message.body) {
        dropPending(cid);
        break;
      }
    }
  }
  const li = messageItem(message);
  li.dataset.id = message.id;
  state.rendered.set(message.id, li);
  const after = [...el.messages.children].find((node) => node.dataset.id && node.dataset.id > message.id);
  const firstPending = el.messages.querySelector('.is-pending, .is-failed');
  el.messages.insertBefore(li, after ?? firstPending ?? null);
  regroup();
  scrollToEnd();
  return true;
}

function messageItem(message, { pending = false } = {}) {
  const kind = ['visitor', 'agent', 'system'].includes(message.senderType) ? message.senderType : 'agent';
  const author = kind === 'agent' ? message.senderName || 'Support' : null;
  return h(
    'li',
    { class: `sd-msg sd-msg-${kind}${pending ? ' is-pending' : ''}`, dataset: { sender: message.senderId ?? kind } },
    author ? h('span', { class: 'sd-msg-author' }, author) : null,
    h('div', { class: 'sd-bubble' }, message.body),
    kind !== 'system'
      ? h('span', { class: 'sd-msg-meta' }, pending ? 'Sending…' : clockTime(message.createdAt))
      : null,
  );
}

/** Shows an agent's name only on the first of consecutive messages. */
function regroup() {
  let previous = null;
  for (const li of el.messages.children) {
    const author = li.querySelector('.sd-msg-author');
    if (author) author.hidden = previous === li.dataset.sender;
    previous = li.dataset.sender;
  }
}

function scrollToEnd(smooth = true) {
  el.messages.scrollTo({ top: el.messages.scrollHeight, behavior: smooth ? 'smooth' : 'auto' });
}

function sendMessage(body) {
  const cid = clientId();
  const li = messageItem({ body, senderType: 'visitor' }, { pending: true });
  state.pending.set(cid, { body, li });
  el.messages.append(li);
  scrollToEnd();
  state.socket?.send({ type: 'message', id: cid, sessionId: conversation.sessionId, body }, { queue: true });
}

function dropPending(cid) {
  state.pending.get(cid)?.li.remove();
  state.pending.delete(cid);
}

function markFailed(cid, reason) {
  const pending = state.pending.get(cid);
  if (!pending) return;
  pending.li.classList.remove('is-pending');
  pending.li.classList.add('is-failed');
  const meta = pending.li.querySelector('.sd-msg-meta');
  meta.replaceChildren(
    `Not sent${reason ? `: ${reason}` : ''} · `,
    h(
      'button',
      {
        type: 'button',
        class: 'sd-retry',
        onclick: () => {
          dropPending(cid);
          sendMessage(pending.body);
        },
      },
      'Retry',
    ),
  );
}

function setClosed(closed) {
  state.closed = closed;
  el.closed.hidden = !closed;
  el.composer.hidden = closed;
  if (closed) {
    hideTyping();
    el.chatSuggestions.hidden = true;
  }
}

function showTyping() {
  el.typing.hidden = false;
  clearTimeout(state.typingTimer);
  state.typingTimer = setTimeout(hideTyping, TYPING_SHOWN_MS);
}

function hideTyping() {
  clearTimeout(state.typingTimer);
  el.typing.hidden = true;
}

const sendTyping = throttle(() => {
  if (conversation) state.socket?.send({ type: 'typing', sessionId: conversation.sessionId });
}, 2500);

function autosize() {
  el.input.style.height = 'auto';
  el.input.style.height = `${Math.min(el.input.scrollHeight, 120)}px`;
}

el.input.addEventListener('input', () => {
  autosize();
  if (el.input.value.trim()) sendTyping();
  suggestForComposer(el.input.value);
});

el.input.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    el.composer.requestSubmit();
  }
});

el.composer.addEventListener('submit', (event) => {
  event.preventDefault();
  const body = el.input.value.trim();
  if (!body || !conversation || state.closed) return;
  sendMessage(body);
  el.input.value = '';
  autosize();
  suggestForComposer.cancel();
  el.chatSuggestions.hidden = true;
  el.input.focus();
});

el.newChat.addEventListener('click', () => {
  forgetConversation();
  focusView();
});

// A new address for this same page (a pasted link, another widget key):
// start over from it, as a fresh load would.
window.addEventListener('hashchange', () => {
  const next = hashParams();
  if (next.get('session') || (next.get('widgetKey') && next.get('widgetKey') !== config.widgetKey)) {
    location.reload();
  }
});

// --- Start ------------------------------------------------------------------

renderPresence(null);
if (!config.widgetKey && !conversation) showMissing('This widget is not set up');
refreshPresence().finally(schedulePresence);
if (openOnLoad) setOpen(true);
// A chat in progress stays live while the panel is closed (unread badge).
else if (conversation) startConversation();
