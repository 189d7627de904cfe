// The message list: messages in id order, the visitor's pending ones until
// the server echoes them, the closed notice, the typing indicator. Each
// message is sent with a clientMessageId (its pending id), so the socket can
// resend it after a reconnect without the server storing it twice.

import { h, clientId, clockTime } from '../util.js';
import { el } from './dom.js';
import { state } from './state.js';

const TYPING_SHOWN_MS = 4000;

/** Adds a message in id order (ids are time-ordered); false if already shown. */
export function renderMessage(message) {
  if (!message?.id || state.rendered.has(message.id)) return false;
  if (message.clientMessageId && state.pending.has(message.clientMessageId)) {
    dropPending(message.clientMessageId);
  } else if (message.senderType === 'visitor' && !message.clientMessageId) {
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
    kind !== 'system' ? h('span', { class: 'sd-msg-meta' }, pending ? 'Sending…' : clockTime(message.createdAt)) : null,
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

export function scrollToEnd(smooth = true) {
  el.messages.scrollTo({ top: el.messages.scrollHeight, behavior: smooth ? 'smooth' : 'auto' });
}

export function sendMessage(body) {
  const cid = clientId();
  const li = messageItem({ body, senderType: 'visitor' }, { pending: true });
  state.pending.set(cid, { body, li });
  el.messages.append(li);
  scrollToEnd();
  state.socket?.send({ type: 'message', id: cid, sessionId: state.conversation.sessionId, body, clientMessageId: cid }, { queue: true });
}

export function dropPending(cid) {
  state.pending.get(cid)?.li.remove();
  state.pending.delete(cid);
}

export function markFailed(cid, reason) {
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

export function setClosed(closed) {
  state.closed = closed;
  el.closed.hidden = !closed;
  el.composer.hidden = closed;
  if (closed) {
    hideTyping();
    showQueuePosition(null);
    el.chatSuggestions.hidden = true;
  }
}

/** "You are number 3 in line" while the chat waits for an agent; null hides it. */
export function showQueuePosition(position) {
  el.queue.hidden = !position;
  el.queue.textContent = position ? `You are number ${position} in line. An agent will be with you soon.` : '';
}

export function showTyping() {
  el.typing.hidden = false;
  clearTimeout(state.typingTimer);
  state.typingTimer = setTimeout(hideTyping, TYPING_SHOWN_MS);
}

export function hideTyping() {
  clearTimeout(state.typingTimer);
  el.typing.hidden = true;
}
