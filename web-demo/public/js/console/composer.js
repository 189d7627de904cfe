// Replying in the open conversation, and closing it.

import { clientId, h, throttle, toast } from '../util.js';
import { draftsOf } from './drafts.js';
import { matches } from './keys.js';

/** Waits before each resend of a reply whose answer was lost. */
const RESEND_DELAYS_MS = [1000, 2000, 4000, 8000];

/** Whether a send failed on the way (no answer, or the service busy or down). */
function worthResending(err) {
  return err?.status === 0 || err?.status === 429 || err?.status >= 500;
}

/** Sets this part up on the console `c` and adds its functions to it. */
export function setUpComposer(c) {
  const { el, s, me, api, on } = c;
  const drafts = draftsOf(me.id);
  Object.assign(c, { restoreDraft });

  /** The open chat's kept draft, into the reply box. */
  function restoreDraft() {
    el.reply.value = drafts.get('chat', s.openId);
  }

  // One clientMessageId for every try of a reply: the service stores it once
  // however many tries reach it (the first answers 201, a repeat 200).
  async function sendReply(sessionId, body, attachmentIds = []) {
    const path = `/chat/sessions/${encodeURIComponent(sessionId)}/messages`;
    // No senderId: a signed-in agent's message is theirs.
    const message = { body, senderType: 'agent', clientMessageId: clientId() };
    if (attachmentIds.length) message.attachmentIds = attachmentIds;
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
    drafts.set('chat', s.openId, el.reply.value);
    if (el.reply.value.trim()) sendTyping();
  });

  on(el.reply, 'keydown', (event) => {
    if (matches('chat-send', event)) {
      event.preventDefault();
      el.composer.requestSubmit();
    }
  });

  on(el.composer, 'submit', async (event) => {
    event.preventDefault();
    const files = pending.splice(0);
    const body = el.reply.value.trim() || files.map((file) => file.filename).join(', ');
    const sessionId = s.openId;
    if (!body || !sessionId) return;
    el.replySend.disabled = true;
    el.reply.value = '';
    showPending();
    try {
      const message = await sendReply(
        sessionId,
        body,
        files.map((file) => file.id),
      );
      drafts.clear('chat', sessionId);
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

  // Files: the Attach button or a drop on the conversation uploads them
  // (raw body, with the session); they go with the next reply.
  const pending = [];

  function showPending() {
    el.replyFiles.replaceChildren(...pending.map((file) => h('li', { class: 'file-chip' }, file.filename)));
    el.replyFiles.hidden = pending.length === 0;
  }

  async function uploadFiles(files) {
    for (const file of files) {
      try {
        const response = await fetch(`/api/v1/attachments?filename=${encodeURIComponent(file.name)}`, {
          method: 'POST',
          headers: {
            'X-CSRF-Token': c.session.csrf,
            'Content-Type': file.type || 'application/octet-stream',
            Accept: 'application/json',
          },
          body: file,
          credentials: 'same-origin',
          cache: 'no-store',
        });
        const data = await response.json().catch(() => null);
        if (!response.ok) throw new Error(data?.error ?? `Upload failed (${response.status})`);
        pending.push({ id: data.id, filename: data.filename });
      } catch (err) {
        toast(`${file.name}: ${err.message}`, { error: true });
      }
    }
    showPending();
  }

  on(el.replyAttach, 'click', () => el.replyFile.click());
  on(el.replyFile, 'change', () => {
    uploadFiles([...el.replyFile.files]);
    el.replyFile.value = '';
  });
  for (const zone of [el.messages, el.composer]) {
    on(zone, 'dragover', (event) => {
      if (!s.openId) return;
      event.preventDefault();
      el.composer.classList.add('is-dropping');
    });
    on(zone, 'dragleave', () => el.composer.classList.remove('is-dropping'));
    on(zone, 'drop', (event) => {
      event.preventDefault();
      el.composer.classList.remove('is-dropping');
      if (s.openId) uploadFiles([...(event.dataTransfer?.files ?? [])]);
    });
  }

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
