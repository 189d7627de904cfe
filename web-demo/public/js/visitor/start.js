// Starting a chat: the first question, an optional name and email.

import { request } from '../api.js';
import { resetConversationView, startConversation } from './chat.js';
import { el } from './dom.js';
import { sendMessage } from './messages.js';
import { showView } from './panel.js';
import { startError } from './start-error.js';
import { state, config, saveConversation } from './state.js';

export function wireStart() {
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
      state.conversation = {
        sessionId: session.id,
        token: session.visitorToken,
        expiresAt: session.visitorTokenExpiresAt,
        widgetKey: config.widgetKey,
        visitorName: session.visitorName ?? visitorName,
      };
      saveConversation(state.conversation);
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
}
