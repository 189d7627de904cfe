// One open conversation: its head, its details and its messages.

import { $, clockTime, h, initials, relativeTime, toast } from '../util.js';

/** Sets this part up on the console `c` and adds its functions to it. */
export function setUpConversation(c) {
  const { el, s, me, api, on } = c;
  Object.assign(c, { openSession, closeThread, renderThreadHead, appendMessage });

  async function openSession(id) {
    if (s.openId && s.openId !== id) c.socket.unsubscribe(`session:${s.openId}`);
    s.openId = id;
    s.unread.delete(id);
    s.rendered.clear();
    el.messages.replaceChildren();
    el.typing.hidden = true;
    el.layout.classList.add('has-thread');
    el.empty.hidden = true;
    el.thread.hidden = false;
    s.open = s.sessions.get(id) ?? { id };
    c.restoreDraft();
    c.hideTags();
    c.hideFields();
    renderThreadHead();
    c.renderSessions();
    try {
      const session = await api(`/chat/sessions/${encodeURIComponent(id)}`);
      if (s.openId !== id) return;
      s.open = { ...s.open, ...session };
      c.remember(session);
      c.showTags(session);
      c.showFields(session);
      for (const message of session.messages ?? []) appendMessage({ ...message, sessionId: id }, false);
      renderThreadHead();
      c.renderSessions();
      let last = null;
      for (const messageId of s.rendered.keys()) if (!last || messageId > last) last = messageId;
      c.socket.subscribe(`session:${id}`, last);
      el.messages.scrollTop = el.messages.scrollHeight;
      if (s.open.status !== 'CLOSED') el.reply.focus();
    } catch (err) {
      toast(`Could not open the conversation: ${err.message}`, { error: true });
    }
  }

  function closeThread() {
    if (s.openId) c.socket.unsubscribe(`session:${s.openId}`);
    s.openId = null;
    s.open = null;
    el.thread.hidden = true;
    el.empty.hidden = false;
    el.details.hidden = true;
    c.hideTags();
    c.hideFields();
    el.layout.classList.remove('has-thread');
  }

  on(el.threadBack, 'click', () => {
    const id = s.openId;
    closeThread();
    c.renderSessions();
    $(`.session[data-id="${CSS.escape(id ?? '')}"]`, el.list)?.focus();
  });

  function renderThreadHead() {
    const session = s.open;
    if (!session) return;
    const name = session.visitorName || 'Visitor';
    el.threadAvatar.textContent = initials(name);
    el.threadName.textContent = name;
    el.threadSub.textContent = [session.visitorEmail, session.createdAt ? `started ${relativeTime(session.createdAt)}` : null]
      .filter(Boolean)
      .join(' · ');
    const closed = session.status === 'CLOSED';
    el.threadStatus.textContent = closed ? 'Closed' : 'Active';
    el.threadStatus.className = closed ? 'badge' : 'badge badge-ok';
    el.composer.hidden = closed;
    el.threadClosed.hidden = !closed;
    el.closeSession.hidden = closed;
    const ticket = s.tickets.get(session.id);
    el.threadTicket.hidden = !ticket;
    if (ticket) el.threadTicket.textContent = ticket.ticketNumber ?? 'Ticket created';
    el.makeTicket.disabled = Boolean(ticket);
    el.details.hidden = false;
    el.detailName.textContent = name;
    el.detailEmail.textContent = session.visitorEmail || 'not given';
    el.detailStarted.textContent = session.createdAt ? new Date(session.createdAt).toLocaleString() : '';
    el.detailId.textContent = session.id;
  }

  function appendMessage(message, scroll = true) {
    if (!message?.id || s.rendered.has(message.id)) return;
    c.notePreview(message.sessionId ?? s.openId, message);
    const kind = ['visitor', 'agent', 'system'].includes(message.senderType) ? message.senderType : 'system';
    const mine = kind === 'agent' && message.senderId === me.id;
    const author =
      kind === 'visitor' ? s.open?.visitorName || 'Visitor' : kind === 'agent' ? (mine ? 'You' : message.senderName || 'Agent') : null;
    const classes = ['msg', `msg-${kind}`];
    if (kind === 'agent' && !mine) classes.push('is-other');
    const li = h(
      'li',
      { class: classes.join(' '), dataset: { id: message.id, sender: `${kind}:${message.senderId ?? ''}`, at: message.createdAt ?? '' } },
      kind !== 'system'
        ? h(
            'span',
            { class: 'avatar avatar-sm', 'aria-hidden': 'true' },
            initials(kind === 'agent' ? (message.senderName ?? me.name) : author),
          )
        : null,
      h(
        'div',
        { class: 'msg-body' },
        author ? h('p', { class: 'msg-head' }, h('strong', {}, author), ` · ${clockTime(message.createdAt)}`) : null,
        h('div', { class: 'bubble' }, message.body),
        attachmentList(message.attachments),
      ),
    );
    s.rendered.set(message.id, li);
    const after = [...el.messages.children].find((node) => node.dataset.id > message.id);
    el.messages.insertBefore(li, after ?? null);
    regroup();
    if (scroll) el.messages.scrollTo({ top: el.messages.scrollHeight, behavior: 'smooth' });
  }

  /** A message's files: images as thumbnails, others as chips; both open
   * the signed link the message carries (no key needed). */
  function attachmentList(attachments) {
    if (!Array.isArray(attachments) || attachments.length === 0) return null;
    return h(
      'div',
      { class: 'msg-files' },
      attachments.map((file) =>
        /^image\/(png|jpeg|gif|webp)$/.test(file.contentType)
          ? h(
              'a',
              { href: file.url, target: '_blank', rel: 'noopener', class: 'file-thumb' },
              h('img', { src: file.url, alt: file.filename }),
            )
          : h('a', { href: file.url, target: '_blank', rel: 'noopener', class: 'file-chip' }, file.filename),
      ),
    );
  }

  /** Consecutive messages of one sender within 5 minutes form a group. */
  function regroup() {
    let previous = null;
    for (const li of el.messages.children) {
      const close =
        previous && previous.dataset.sender === li.dataset.sender && new Date(li.dataset.at) - new Date(previous.dataset.at) < 5 * 60_000;
      li.classList.toggle('is-continued', Boolean(close) && !li.classList.contains('msg-system'));
      previous = li;
    }
  }
}
