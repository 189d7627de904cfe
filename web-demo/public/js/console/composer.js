// Replying in the open conversation, and closing it.

import { throttle, toast } from '../util.js';

/** Sets this part up on the console `c` and adds its functions to it. */
export function setUpComposer(c) {
  const { el, s, me, api, on } = c;

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
      const message = await api(`/chat/sessions/${encodeURIComponent(sessionId)}/messages`, {
        method: 'POST',
        body: { body, senderType: 'agent', senderId: me.id },
      });
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
