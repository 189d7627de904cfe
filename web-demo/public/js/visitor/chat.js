// The chat in progress: its history, its socket (the session's visitor
// token), and what the socket's frames change.

import { request, socketUrl } from '../api.js';
import { LiveSocket } from '../socket.js';
import { el } from './dom.js';
import { dropPending, hideTyping, markFailed, renderMessage, scrollToEnd, setClosed, showQueuePosition, showTyping } from './messages.js';
import { currentMainView, showView, updateUnread } from './panel.js';
import { renderLivePresence } from './presence.js';
import { startError } from './start-error.js';
import { state, saveConversation } from './state.js';

export function resetConversationView() {
  el.messages.replaceChildren();
  state.rendered.clear();
  state.pending.clear();
  setClosed(false);
  hideTyping();
  showQueuePosition(null);
}

export async function startConversation() {
  if (state.socket || !state.conversation) return;
  const current = state.conversation;
  const socket = new LiveSocket({
    url: async () => socketUrl(`/api/v1/ws?token=${encodeURIComponent(current.token)}`),
    onFrame,
    onStatus: (status, detail) => onSocketStatus(status, detail),
  });
  state.socket = socket;
  if (!state.historyLoaded) {
    const ok = await loadHistory(current);
    if (!ok || state.conversation !== current) return;
  }
  keepFresh(current);
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

let refreshTimer = null;

/**
 * Visitor tokens are short-lived: trade the current one for a fresh one at
 * half its life while the chat is open here (the socket's next connect
 * reads `current.token`).
 */
function keepFresh(current) {
  clearTimeout(refreshTimer);
  if (state.conversation !== current) return;
  const left = Date.parse(current.expiresAt ?? '') - Date.now();
  const wait = Number.isFinite(left) ? Math.max(5_000, left / 2) : 60_000;
  refreshTimer = setTimeout(async () => {
    if (state.conversation !== current) return;
    try {
      const fresh = await request('/widget/v1/tokens/refresh', { method: 'POST', token: current.token });
      current.token = fresh.visitorToken;
      current.expiresAt = fresh.visitorTokenExpiresAt;
      saveConversation(current);
      keepFresh(current);
    } catch (err) {
      if (err.status === 401 || err.status === 403) {
        if (state.conversation === current) forgetConversation('Your previous conversation has ended. You can start a new chat here.');
      } else {
        refreshTimer = setTimeout(() => keepFresh(current), 10_000);
      }
    }
  }, wait);
}

export function forgetConversation(notice) {
  clearTimeout(refreshTimer);
  state.socket?.stop();
  state.socket = null;
  state.live = null;
  state.conversation = null;
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
    if (detail?.attempt && detail.attempt % 3 === 0 && state.conversation) verifyConversation();
  }
}

async function verifyConversation() {
  const current = state.conversation;
  try {
    await request(`/widget/v1/sessions/${encodeURIComponent(current.sessionId)}`, { token: current.token });
  } catch (err) {
    if ((err.status === 401 || err.status === 404) && state.conversation === current) {
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
      // Visitors see an agent's name, never their user id: agents are told
      // apart by name.
      const agent = frame.data;
      if (!agent?.name) break;
      state.live ??= new Map();
      if (agent.online && agent.visibility !== 'PRIVATE') state.live.set(agent.name, agent.name);
      else state.live.delete(agent.name);
      renderLivePresence();
      break;
    }
    case 'chat.message': {
      const message = frame.data;
      if (!message || (message.sessionId && message.sessionId !== state.conversation?.sessionId)) return;
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
      if (frame.data?.id === state.conversation?.sessionId) setClosed(frame.data.status === 'CLOSED');
      break;
    case 'typing':
      if (frame.data?.senderType && frame.data.senderType !== 'visitor') showTyping();
      break;
    case 'queue':
      // The chat waits for an agent: its place in line (1 is next).
      if (typeof frame.data?.position === 'number') showQueuePosition(frame.data.position);
      break;
    case 'assignment':
      // Assigned: out of the queue. Sent back to the queue: a `queue` frame follows.
      if (frame.data?.sessionId === state.conversation?.sessionId && frame.data.assigned) showQueuePosition(null);
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
