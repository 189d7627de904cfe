// Agent console, part two: the workspace. Presence heartbeat (every 15 s,
// removed on leaving), one socket (a fresh short-lived token per connection)
// subscribed to the entity's chat activity and to presence, the session
// list, a conversation, replies, and turning a chat into a ticket.

import { listOf, request, socketUrl } from './api.js';
import { LiveSocket } from './socket.js';
import { $, $$, clockTime, h, initials, relativeTime, shortTime, throttle, toast } from './util.js';

const HEARTBEAT_MS = 15_000;
const TYPING_SHOWN_MS = 4000;
const ENTITY_ITEM = 'sd-agent-entity';

export async function startConsole({ key, me, entities, storage, onSignOut }) {
  const el = {
    entity: $('#entity-select'),
    connDot: $('#conn-dot'),
    connText: $('#conn-text'),
    meAvatar: $('#me-avatar'),
    meName: $('#me-name'),
    meEmail: $('#me-email'),
    statusToggle: $('#status-toggle'),
    statusDot: $('#status-dot'),
    statusText: $('#status-text'),
    signOut: $('#sign-out'),
    sideToggle: $('#side-toggle'),
    side: $('#side'),
    layout: $('#layout'),
    list: $('#session-list'),
    listEmpty: $('#sessions-empty'),
    emptyWidgetLink: $('#empty-widget-link'),
    countActive: $('#count-active'),
    segments: $$('.segment'),
    main: $('#main'),
    empty: $('#conversation-empty'),
    thread: $('#thread'),
    threadBack: $('#thread-back'),
    threadAvatar: $('#thread-avatar'),
    threadName: $('#thread-name'),
    threadSub: $('#thread-sub'),
    threadStatus: $('#thread-status'),
    threadTicket: $('#thread-ticket'),
    makeTicket: $('#make-ticket'),
    closeSession: $('#close-session'),
    messages: $('#messages'),
    typing: $('#typing'),
    typingText: $('#typing-text'),
    composer: $('#composer'),
    reply: $('#reply'),
    replySend: $('#reply-send'),
    threadClosed: $('#thread-closed'),
    team: $('#team'),
    teamEmpty: $('#team-empty'),
    countOnline: $('#count-online'),
    widgetLink: $('#widget-link'),
    widgetKey: $('#widget-key'),
    details: $('#details'),
    detailName: $('#detail-name'),
    detailEmail: $('#detail-email'),
    detailStarted: $('#detail-started'),
    detailId: $('#detail-id'),
    dialog: $('#ticket-dialog'),
    ticketForm: $('#ticket-form'),
    ticketSubject: $('#ticket-subject'),
    ticketPriority: $('#ticket-priority'),
    ticketDescription: $('#ticket-description'),
    ticketError: $('#ticket-error'),
    ticketSubmit: $('#ticket-submit'),
    ticketCancel: $('#ticket-cancel'),
  };

  // Every listener dies with this console (sign out, then sign in again).
  const lifetime = new AbortController();
  const on = (target, type, listener) => target.addEventListener(type, listener, { signal: lifetime.signal });

  const savedEntity = storage.getItem(ENTITY_ITEM);
  const s = {
    entityId: entities.some((e) => e.id === savedEntity) ? savedEntity : entities[0].id,
    filter: 'ACTIVE',
    sessions: new Map(), // id -> session (no messages)
    preview: new Map(), // id -> last message
    activity: new Map(), // id -> ISO time of the last activity
    unread: new Set(),
    fresh: new Set(), // sessions that just appeared (flash once)
    typingIn: new Map(), // session id -> timer
    openId: null,
    open: null, // the open session
    rendered: new Map(), // message id -> <li>
    team: new Map(), // user id -> presence
    tickets: new Map(), // session id -> ticket
    online: true,
    heartbeat: null,
    opened: false,
    stopped: false,
  };

  const api = (path, options = {}) => request(`/api/v1${path}`, { ...options, key });

  // --- Who I am, and presence ------------------------------------------------

  el.meAvatar.textContent = initials(me.name);
  el.meName.textContent = me.name;
  el.meEmail.textContent = `${me.email} · ${me.visibility === 'PRIVATE' ? 'private' : 'public'}`;

  async function beat() {
    try {
      await api('/chat/agent-presence', {
        method: 'POST',
        body: { userId: me.id, name: me.name, email: me.email, role: me.role, visibility: me.visibility },
      });
    } catch (err) {
      if (err.status === 401) return signOut(`Signed out: ${err.message}.`);
      toast(`Could not refresh your presence: ${err.message}`, { error: true });
    }
  }

  function setOnline(online) {
    s.online = online;
    clearInterval(s.heartbeat);
    el.statusToggle.setAttribute('aria-pressed', String(online));
    el.statusDot.className = online ? 'dot dot-ok' : 'dot dot-warn';
    el.statusText.textContent = online ? 'Online' : 'Away';
    el.statusToggle.title = online ? 'You are online: click to go away' : 'You are away: click to go online';
    if (online) {
      beat();
      s.heartbeat = setInterval(beat, HEARTBEAT_MS);
    } else {
      api(`/chat/agent-presence/${encodeURIComponent(me.id)}`, { method: 'DELETE' }).catch(() => {});
    }
  }

  on(el.statusToggle, 'click', () => setOnline(!s.online));

  // Leaving the page (tab closed, navigation): offline at once, not after 30 s.
  let left = false;
  const leave = () => {
    if (!s.online || s.stopped || left) return;
    left = true;
    clearInterval(s.heartbeat);
    fetch(`/api/v1/chat/agent-presence/${encodeURIComponent(me.id)}`, {
      method: 'DELETE',
      headers: { 'X-API-Key': key },
      keepalive: true,
      credentials: 'omit',
    }).catch(() => {});
  };
  const comeBack = (event) => {
    left = false;
    if (event.persisted && s.online && !s.stopped) setOnline(true);
  };
  on(window, 'beforeunload', leave);
  on(window, 'pagehide', leave);
  on(window, 'pageshow', comeBack);

  // --- Entities and the widget link -------------------------------------------

  el.entity.replaceChildren(...entities.map((e) => h('option', { value: e.id }, e.name)));
  el.entity.value = s.entityId;
  on(el.entity, 'change', () => switchEntity(el.entity.value));

  function showWidgetLink() {
    const entity = entities.find((e) => e.id === s.entityId);
    const widgetKey = entity?.widgetKeyTest ?? '';
    const href = `visitor.html#widgetKey=${encodeURIComponent(widgetKey)}`;
    el.widgetLink.href = href;
    el.emptyWidgetLink.href = href;
    el.widgetKey.textContent = widgetKey || 'not available';
  }

  function switchEntity(entityId) {
    if (entityId === s.entityId) return;
    socket.unsubscribe(`entity:${s.entityId}`);
    s.entityId = entityId;
    storage.setItem(ENTITY_ITEM, entityId);
    socket.subscribe(`entity:${entityId}`);
    closeThread();
    s.sessions.clear();
    renderSessions();
    showWidgetLink();
    loadSessions();
  }

  // --- The socket ------------------------------------------------------------

  const socket = new LiveSocket({
    url: async () => {
      const issued = await api('/ws/tokens', { method: 'POST', body: {} });
      return socketUrl(`/api/v1/ws?token=${encodeURIComponent(issued.token)}`);
    },
    onFrame,
    onStatus: (status, detail) => {
      const live = status === 'open';
      el.connDot.className = live ? 'dot dot-ok' : status === 'reconnecting' ? 'dot dot-warn' : 'dot';
      el.connText.textContent = {
        open: 'Live',
        connecting: 'Connecting…',
        reconnecting: 'Reconnecting…',
        closed: 'Offline',
      }[status];
      if (status === 'closed' && detail?.error?.status === 401) signOut(`Signed out: ${detail.error.message}.`);
      if (live) {
        // After (re)subscribing, fetch a fresh snapshot: nothing missed.
        loadSessions();
        loadTeam();
      }
    },
  });
  socket.subscribe('presence');
  socket.subscribe(`entity:${s.entityId}`);

  function onFrame(frame) {
    switch (frame.type) {
      case 'chat.session':
        if (frame.data) upsertSession(frame.data);
        break;
      case 'chat.message':
        if (frame.data) onMessage(frame.data);
        break;
      case 'typing':
        if (frame.data) onTyping(frame.data);
        break;
      case 'presence':
        if (frame.data) onPresence(frame.data);
        break;
      case 'error':
        toast(frame.error ?? 'Something went wrong', { error: true });
        break;
      default:
        break;
    }
  }

  // --- Sessions ----------------------------------------------------------------

  async function loadSessions() {
    const entityId = s.entityId;
    const filter = s.filter;
    try {
      const query = new URLSearchParams({ entityId, status: filter, limit: '100' });
      const sessions = listOf(await api(`/chat/sessions?${query}`));
      if (entityId !== s.entityId || filter !== s.filter) return;
      for (const [id, session] of s.sessions) if (session.status === filter) s.sessions.delete(id);
      for (const session of sessions) remember(session);
      renderSessions();
      fillPreviews(sessions.map((x) => x.id));
    } catch (err) {
      if (err.status === 401) return signOut(`Signed out: ${err.message}.`);
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
      renderThreadHead();
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
    if (message.senderType === 'visitor') stopTyping(sessionId);
    if (sessionId === s.openId) {
      appendMessage(message);
    } else if (message.senderType === 'visitor') {
      s.unread.add(sessionId);
    }
    renderSessions();
  }

  function onTyping(data) {
    const sessionId = data.sessionId;
    if (data.senderType !== 'visitor') {
      if (sessionId === s.openId && data.senderId && data.senderId !== me.id) {
        const name = s.team.get(data.senderId)?.name ?? 'A teammate';
        showThreadTyping(`${name} is typing…`);
      }
      return;
    }
    clearTimeout(s.typingIn.get(sessionId));
    s.typingIn.set(sessionId, setTimeout(() => stopTyping(sessionId), TYPING_SHOWN_MS));
    if (sessionId === s.openId) showThreadTyping(`${s.open?.visitorName ?? 'Visitor'} is typing…`);
    renderSessions();
  }

  function stopTyping(sessionId) {
    clearTimeout(s.typingIn.get(sessionId));
    if (s.typingIn.delete(sessionId)) renderSessions();
    if (sessionId === s.openId) el.typing.hidden = true;
  }

  let threadTypingTimer = null;
  function showThreadTyping(text) {
    el.typingText.textContent = text;
    el.typing.hidden = false;
    clearTimeout(threadTypingTimer);
    threadTypingTimer = setTimeout(() => {
      el.typing.hidden = true;
    }, TYPING_SHOWN_MS);
  }

  function renderSessions() {
    const focusedId = document.activeElement?.closest?.('.session')?.dataset.id;
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
    const label = `${name}${unread ? ', unread' : ''}${typing ? ', typing' : ''}: ${previewText}`;
    return h(
      'li',
      {},
      h(
        'button',
        {
          type: 'button',
          class: classes.join(' '),
          'aria-current': session.id === s.openId ? 'true' : null,
          'aria-label': label,
          dataset: { id: session.id },
          onclick: () => openSession(session.id),
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
            unread ? h('span', { class: 'session-unread' }) : null,
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

  // --- One conversation ----------------------------------------------------------

  async function openSession(id) {
    if (s.openId && s.openId !== id) socket.unsubscribe(`session:${s.openId}`);
    s.openId = id;
    s.unread.delete(id);
    s.rendered.clear();
    el.messages.replaceChildren();
    el.typing.hidden = true;
    el.layout.classList.add('has-thread');
    el.empty.hidden = true;
    el.thread.hidden = false;
    s.open = s.sessions.get(id) ?? { id };
    renderThreadHead();
    renderSessions();
    try {
      const session = await api(`/chat/sessions/${encodeURIComponent(id)}`);
      if (s.openId !== id) return;
      s.open = { ...s.open, ...session };
      remember(session);
      for (const message of session.messages ?? []) appendMessage({ ...message, sessionId: id }, false);
      renderThreadHead();
      renderSessions();
      let last = null;
      for (const messageId of s.rendered.keys()) if (!last || messageId > last) last = messageId;
      socket.subscribe(`session:${id}`, last);
      el.messages.scrollTop = el.messages.scrollHeight;
      if (s.open.status !== 'CLOSED') el.reply.focus();
    } catch (err) {
      toast(`Could not open the conversation: ${err.message}`, { error: true });
    }
  }

  function closeThread() {
    if (s.openId) socket.unsubscribe(`session:${s.openId}`);
    s.openId = null;
    s.open = null;
    el.thread.hidden = true;
    el.empty.hidden = false;
    el.details.hidden = true;
    el.layout.classList.remove('has-thread');
  }

  on(el.threadBack, 'click', () => {
    const id = s.openId;
    closeThread();
    renderSessions();
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
    notePreview(message.sessionId ?? s.openId, message);
    const kind = ['visitor', 'agent', 'system'].includes(message.senderType) ? message.senderType : 'system';
    const mine = kind === 'agent' && message.senderId === me.id;
    const author =
      kind === 'visitor'
        ? s.open?.visitorName || 'Visitor'
        : kind === 'agent'
          ? mine
            ? 'You'
            : message.senderName || 'Agent'
          : null;
    const classes = ['msg', `msg-${kind}`];
    if (kind === 'agent' && !mine) classes.push('is-other');
    const li = h(
      'li',
      { class: classes.join(' '), dataset: { id: message.id, sender: `${kind}:${message.senderId ?? ''}`, at: message.createdAt ?? '' } },
      kind !== 'system'
        ? h('span', { class: 'avatar avatar-sm', 'aria-hidden': 'true' }, initials(kind === 'agent' ? message.senderName ?? me.name : author))
        : null,
      h(
        'div',
        { class: 'msg-body' },
        author
          ? h('p', { class: 'msg-head' }, h('strong', {}, author), ` · ${clockTime(message.createdAt)}`)
          : null,
        h('div', { class: 'bubble' }, message.body),
      ),
    );
    s.rendered.set(message.id, li);
    const after = [...el.messages.children].find((node) => node.dataset.id > message.id);
    el.messages.insertBefore(li, after ?? null);
    regroup();
    if (scroll) el.messages.scrollTo({ top: el.messages.scrollHeight, behavior: 'smooth' });
  }

  /** Consecutive messages of one sender within 5 minutes form a group. */
  function regroup() {
    let previous = null;
    for (const li of el.messages.children) {
      const close =
        previous &&
        previous.dataset.sender === li.dataset.sender &&
        new Date(li.dataset.at) - new Date(previous.dataset.at) < 5 * 60_000;
      li.classList.toggle('is-continued', Boolean(close) && !li.classList.contains('msg-system'));
      previous = li;
    }
  }

  // --- Replying ---------------------------------------------------------------------

  const sendTyping = throttle(() => {
    if (s.openId) socket.send({ type: 'typing', sessionId: s.openId, senderId: me.id });
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
      if (s.openId === sessionId) appendMessage({ senderName: me.name, ...message, sessionId });
      renderSessions();
    } catch (err) {
      if (s.openId === sessionId && !el.reply.value) el.reply.value = body;
      if (err.code === 'session_closed') upsertSession({ ...s.open, status: 'CLOSED' });
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
      upsertSession({ ...s.open, ...session, messages: undefined });
      toast('Conversation closed');
    } catch (err) {
      toast(`Could not close: ${err.message}`, { error: true });
    }
  });

  // --- Chat to ticket ---------------------------------------------------------------

  on(el.makeTicket, 'click', () => {
    const session = s.open;
    if (!session) return;
    const lines = [...el.messages.children].map((li) => {
      const who = li.querySelector('.msg-head strong')?.textContent ?? (li.classList.contains('msg-system') ? 'System' : '');
      const author = li.classList.contains('msg-visitor') ? s.open.visitorName || 'Visitor' : who || 'Agent';
      return `[${clockTime(li.dataset.at)}] ${author}: ${li.querySelector('.bubble')?.textContent ?? ''}`;
    });
    const first = [...el.messages.querySelectorAll('.msg-visitor .bubble')][0]?.textContent ?? '';
    const subject = `Chat with ${session.visitorName || 'visitor'}${first ? `: ${first}` : ''}`;
    el.ticketSubject.value = subject.length > 120 ? `${subject.slice(0, 117)}…` : subject;
    el.ticketDescription.value = `Transcript of chat ${session.id}\n\n${lines.join('\n')}`;
    el.ticketPriority.value = 'MEDIUM';
    el.ticketError.hidden = true;
    el.dialog.showModal();
    el.ticketSubject.focus();
  });

  on(el.ticketCancel, 'click', () => el.dialog.close());

  on(el.ticketForm, 'submit', async (event) => {
    event.preventDefault();
    const session = s.open;
    const subject = el.ticketSubject.value.trim();
    if (!session || !subject) {
      el.ticketError.textContent = 'A subject is required.';
      el.ticketError.hidden = false;
      el.ticketSubject.focus();
      return;
    }
    el.ticketSubmit.disabled = true;
    try {
      const body = {
        subject,
        description: el.ticketDescription.value,
        priority: el.ticketPriority.value,
        entityId: session.entityId ?? s.entityId,
      };
      if (session.visitorEmail) body.visitorEmail = session.visitorEmail;
      const ticket = await api('/tickets', { method: 'POST', body });
      s.tickets.set(session.id, ticket);
      el.dialog.close();
      renderThreadHead();
      toast(`Ticket ${ticket.ticketNumber ?? ''} created`);
      // A note in the conversation, which the visitor sees too.
      api(`/chat/sessions/${encodeURIComponent(session.id)}/messages`, {
        method: 'POST',
        body: {
          body: `Ticket ${ticket.ticketNumber ?? ticket.id} was created from this conversation.`,
          senderType: 'system',
        },
      })
        .then((message) => s.openId === session.id && appendMessage({ ...message, sessionId: session.id }))
        .catch(() => {});
    } catch (err) {
      el.ticketError.textContent = err.message;
      el.ticketError.hidden = false;
    } finally {
      el.ticketSubmit.disabled = false;
    }
  });

  // --- Team presence ------------------------------------------------------------------

  async function loadTeam() {
    try {
      const agents = listOf(await api('/chat/agent-presence'));
      s.team.clear();
      for (const agent of agents) if (agent.online !== false) s.team.set(agent.userId, agent);
      renderTeam();
    } catch {
      // Shown from the live events instead.
    }
  }

  function onPresence(data) {
    if (data.online) {
      s.team.set(data.userId, { ...s.team.get(data.userId), ...data });
    } else {
      s.team.delete(data.userId);
    }
    renderTeam();
  }

  function renderTeam() {
    const members = [...s.team.values()].sort((a, b) => {
      if (a.userId === me.id) return -1;
      if (b.userId === me.id) return 1;
      return String(a.name).localeCompare(String(b.name));
    });
    el.team.replaceChildren(
      ...members.map((agent) =>
        h(
          'li',
          { class: 'team-member', dataset: { userId: agent.userId } },
          h('span', { class: 'avatar avatar-sm', 'aria-hidden': 'true' }, initials(agent.name)),
          h(
            'span',
            { class: 'team-text' },
            h('span', { class: 'team-name' }, agent.name),
            h(
              'span',
              { class: 'team-meta' },
              [
                agent.userId === me.id ? 'You' : null,
                agent.visibility === 'PRIVATE' ? 'Private' : 'Public',
                agent.role === 'ADMIN' ? 'Admin' : 'Agent',
              ]
                .filter(Boolean)
                .join(' · '),
            ),
          ),
          agent.visibility === 'PRIVATE' ? h('span', { class: 'badge' }, 'Hidden') : null,
        ),
      ),
    );
    el.teamEmpty.hidden = members.some((m) => m.userId !== me.id);
    el.countOnline.textContent = members.length ? String(members.length) : '';
  }

  // --- Layout and signing out -------------------------------------------------------

  on(el.sideToggle, 'click', () => {
    const open = !el.side.classList.contains('is-open');
    el.side.classList.toggle('is-open', open);
    el.sideToggle.setAttribute('aria-expanded', String(open));
  });

  async function signOut(reason) {
    if (s.stopped) return;
    clearInterval(s.heartbeat);
    socket.stop();
    if (s.online) {
      await api(`/chat/agent-presence/${encodeURIComponent(me.id)}`, { method: 'DELETE' }).catch(() => {});
    }
    s.stopped = true;
    lifetime.abort();
    closeThread();
    s.sessions.clear();
    el.list.replaceChildren();
    el.team.replaceChildren();
    onSignOut(reason);
  }

  on(el.signOut, 'click', () => signOut());

  // --- Go --------------------------------------------------------------------------------

  showWidgetLink();
  setOnline(true);
  renderTeam();
  renderSessions();
  loadSessions();
  socket.start();
}
