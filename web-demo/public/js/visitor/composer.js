// Writing to the team: the message box, typing notices, a new chat.

import { throttle } from '../util.js';
import { forgetConversation } from './chat.js';
import { el } from './dom.js';
import { suggestForComposer } from './knowledge.js';
import { sendMessage } from './messages.js';
import { focusView } from './panel.js';
import { state } from './state.js';

const sendTyping = throttle(() => {
  if (state.conversation) state.socket?.send({ type: 'typing', sessionId: state.conversation.sessionId });
}, 2500);

function autosize() {
  el.input.style.height = 'auto';
  el.input.style.height = `${Math.min(el.input.scrollHeight, 120)}px`;
}

export function wireComposer() {
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
    if (!body || !state.conversation || state.closed) return;
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
}
