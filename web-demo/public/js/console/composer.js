// Replying in the open conversation, and closing it.

import { clientId, throttle, toast } from '../util.js';

/** Waits before each resend of a reply whose answer was lost. */
const RESEND_DELAYS_MS = [1000, 2000, 4000, 8000];

/** Whether a send failed on the way (no answer, or the service busy or down). */
function worthResending(err) {
  return err?.status === 0 || err?.status === 429 || err?.status >= 500;
}

/** Sets this part up on the console `c` and adds its functions to it. */
export function setUpComposer(c) {
  const { el, s, me, api, on } = c;

  // One clientMessageId for every try of a reply: the service stores it once
  // however many tries reach it (the first answers 201, a repeat 200).
  async function sendReply(sessionId, body) {
    const path = `/chat/sessions/${encodeURIComponent(sessionId)}/messages`;
    const message = { body, senderType: 'agent', senderId: me.id, clientMessageId: clientId() };
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await api(path, { method: 'POST', body: message });
      } catch (err) {
        if (attempt >= RESEND_DELAYS_MS.length || !worthResending(err)) throw err;
        await new Promise((resolve) => setTimeout(resolve, RESEND_DELAYS_MS[attempt]));
      }
    }
  }

  const sendTyping = throttle(() => {
    if (s.openId) c.socket.send({ type: 'typing', sessionId: s.openId, senderId: me.id });
  }, 2500);

  on(el.reply, 'input', () => {
    if (el.reply.value.trim()) sendTyping();
  });

  on(el.reply, 'keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      el.composer.requestSubmit();
    }
  });

  on(el.composer, 'submit', async (event) => {
    event.preventDefault();
    const body = el.reply.value.trim();
    const sessionId = s.openId;
    if (!body || !sessionId) return;
    el.replySend.disabled = true;
    el.reply.value = '';
    try {
      const message = await sendReply(sessionId, body);
      if (s.openId === sessionId) c.appendMessage({ senderName: me.name, ...message, sessionId });
      c.renderSessions();
    } catch (err) {
      if (s.openId === sessionId && !el.reply.value) el.reply.value = body;
      if (err.code === 'session_closed') c.upsertSession({ ...s.open, status: 'CLOSED' });
      toast(`Not sent: ${err.message}`, { error: true });
    } finally {
      el.replySend.disabled = false;
      el.reply.focus();
    }
  });

  on(el.closeSession, 'click', async () => {
    const sessionId = s.openId;
    if (!sessionId) return;
    try {
      const session = await api(`/chat/sessions/${encodeURIComponent(sessionId)}`, {
        method: 'PATCH',
        body: { status: 'CLOSED' },
      });
      c.upsertSession({ ...s.open, ...session, messages: undefined });
      toast('Conversation closed');
    } catch (err) {
      toast(`Could not close: ${err.message}`, { error: true });
    }
  });
}
