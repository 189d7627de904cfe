// The session list: loading it, keeping it current from live events, and
// rendering it under the ACTIVE / CLOSED filter.

import { listOf } from '../api.js';
import { $, h, initials, shortTime, toast } from '../util.js';

/** Sets this part up on the console `c` and adds its functions to it. */
export function setUpSessions(c) {
  const { el, s, me, api, on } = c;
  Object.assign(c, { loadSessions, remember, notePreview, upsertSession, onMessage, renderSessions });

  async function loadSessions() {
    const entityId = s.entityId;
    const filter = s.filter;
    try {
      const query = new URLSearchParams({ entityId, status: filter, limit: '100' });
      const sessions = listOf(await api(`/chat/sessions?${query}`));
      if (entityId !== s.entityId || filter !== s.filter) return;
      for (const [id, session] of s.sessions) if (session.status === filter) s.sessions.delete(id);
      for (const session of sessions) c.noteAssignedSession(remember(session), { render: false });
      renderSessions();
      c.renderAssigned();
      fillPreviews(sessions.map((x) => x.id));
    } catch (err) {
      if (err.status === 401) return c.signOut(`Signed out: ${err.message}.`);
      toast(`Could not load conversations: ${err.message}`, { error: true });
    }
  }

  /** The list has no last messages: read them for the first few, once. */
  const previewed = new Set();
  async function fillPreviews(ids) {
    const todo = ids.filter((id) => !previewed.has(id) && !s.preview.has(id)).slice(0, 20);
    for (const id of todo) previewed.add(id);
    const worker = async () => {
      for (let id = todo.shift(); id; id = todo.shift()) {
        try {
          const session = await api(`/chat/sessions/${encodeURIComponent(id)}`);
          const last = session.messages?.at(-1);
          if (last) notePreview(id, last);
        } catch {
          // The preview stays empty.
        }
      }
    };
    await Promise.all([worker(), worker(), worker()]);
    if (!s.stopped) renderSessions();
  }

  function remember(session) {
    const old = s.sessions.get(session.id);
    const merged = { ...old, ...session };
    delete merged.messages;
    s.sessions.set(session.id, merged);
    const last = session.lastMessage ?? session.messages?.at(-1);
    if (last) notePreview(session.id, last);
    if (!s.activity.has(session.id)) {
      s.activity.set(session.id, session.lastMessageAt ?? session.updatedAt ?? session.createdAt);
    }
    return merged;
  }

  function notePreview(sessionId, message) {
    const current = s.preview.get(sessionId);
    if (!current || String(message.id) >= String(current.id)) s.preview.set(sessionId, message);
    const at = message.createdAt;
    if (at && (!s.activity.get(sessionId) || at > s.activity.get(sessionId))) s.activity.set(sessionId, at);
  }

  function upsertSession(data) {
    if (data.entityId && data.entityId !== s.entityId) return;
    const isNew = !s.sessions.has(data.id);
    const session = remember(data);
    if (isNew && session.status === 'ACTIVE') s.fresh.add(session.id);
    renderSessions();
    if (session.id === s.openId) {
      s.open = { ...s.open, ...session };
      c.renderThreadHead();
    }
  }

  async function onMessage(message) {
    const sessionId = message.sessionId;
    if (!sessionId) return;
    if (!s.sessions.has(sessionId)) {
      try {
        const session = await api(`/chat/sessions/${encodeURIComponent(sessionId)}`);
        if (session.entityId && session.entityId !== s.entityId) return;
        if (!s.sessions.has(sessionId)) s.fresh.add(sessionId);
        remember(session);
      } catch {
        return;
      }
    }
    notePreview(sessionId, message);
    if (message.senderType === 'visitor') c.stopTyping(sessionId);
    if (sessionId === s.openId) {
      c.appendMessage(message);
    } else if (message.senderType === 'visitor') {
      s.unread.add(sessionId);
    }
    renderSessions();
  }

  function renderSessions() {
    const focused = document.activeElement;
    const focusedId = el.list.contains(focused) ? focused.closest('.session')?.dataset.id : null;
    const shown = [...s.sessions.values()]
      .filter((session) => session.status === s.filter)
      .sort((a, b) => String(s.activity.get(b.id) ?? '').localeCompare(String(s.activity.get(a.id) ?? '')));
    el.list.replaceChildren(...shown.map(sessionItem));
    el.listEmpty.hidden = shown.length > 0;
    const active = [...s.sessions.values()].filter((x) => x.status === 'ACTIVE').length;
    el.countActive.textContent = active > 0 ? String(active) : '';
    s.fresh.clear();
    if (focusedId) $(`.session[data-id="${CSS.escape(focusedId)}"]`, el.list)?.focus();
  }

  function sessionItem(session) {
    const preview = s.preview.get(session.id);
    const typing = s.typingIn.has(session.id);
    const unread = s.unread.has(session.id);
    const name = session.visitorName || 'Visitor';
    let previewText;
    if (typing) previewText = 'typing…';
    else if (preview) previewText = `${preview.senderType === 'agent' ? 'You: ' : ''}${preview.body}`;
    else previewText = session.visitorEmail || 'New conversation';
    if (preview?.senderType === 'agent' && preview.senderId !== me.id) {
      previewText = `${preview.senderName ?? 'Agent'}: ${preview.body}`;
    }
    const classes = ['session'];
    if (unread) classes.push('is-unread');
    if (s.fresh.has(session.id)) classes.push('is-new');
    return h(
      'li',
      {},
      h(
        'button',
        {
          type: 'button',
          class: classes.join(' '),
          'aria-current': session.id === s.openId ? 'true' : null,
          dataset: { id: session.id },
          onclick: () => c.openSession(session.id),
        },
        h('span', { class: 'avatar', 'aria-hidden': 'true' }, initials(name)),
        h(
          'span',
          { class: 'session-main' },
          h(
            'span',
            { class: 'session-top' },
            h('span', { class: 'session-name' }, name),
            h('span', { class: 'session-time' }, shortTime(s.activity.get(session.id))),
          ),
          h(
            'span',
            { class: 'session-preview' },
            h('span', { class: typing ? 'session-preview-text session-typing' : 'session-preview-text' }, previewText),
            unread ? h('span', { class: 'session-unread' }, h('span', { class: 'sr-only' }, 'unread')) : null,
          ),
        ),
      ),
    );
  }

  for (const segment of el.segments) {
    on(segment, 'click', () => {
      s.filter = segment.dataset.filter;
      for (const other of el.segments) other.setAttribute('aria-pressed', String(other === segment));
      renderSessions();
      loadSessions();
    });
  }
}
