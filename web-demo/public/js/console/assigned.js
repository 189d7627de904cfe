// "Assigned to you": the ACTIVE chats whose assignee is this agent, by
// routing or by hand. Loaded per team (GET /chat/sessions?teamId=…) and from
// the shown entity's sessions, then kept live: an `assignment` frame naming
// this agent adds the chat at once, one naming someone else (or nobody: the
// chat went back to the queue) takes it away, and a close removes it.

import { listOf } from '../api.js';
import { h, initials, shortTime, toast } from '../util.js';

/** Sets this part up on the console `c` and adds its functions to it. */
export function setUpAssigned(c) {
  const { el, s, me, api, entities } = c;
  s.assigned = new Map(); // session id -> session
  Object.assign(c, { loadAssigned, onAssignment, noteAssignedSession, renderAssigned });

  async function loadAssigned() {
    const lists = await Promise.all(
      [...s.myTeams.keys()].map((teamId) =>
        api(`/chat/sessions?${new URLSearchParams({ teamId, status: 'ACTIVE', limit: '100' })}`)
          .then(listOf)
          .catch(() => []),
      ),
    );
    for (const session of [...lists.flat(), ...s.sessions.values()]) noteAssignedSession(session, { render: false });
    renderAssigned();
  }

  /** Adds or removes a session from what it says about itself. */
  function noteAssignedSession(session, { render = true } = {}) {
    if (!session?.id) return;
    const mine = session.assigneeId === me.id && session.status !== 'CLOSED';
    if (mine) s.assigned.set(session.id, { ...s.assigned.get(session.id), ...session });
    else if ('assigneeId' in session || session.status === 'CLOSED') s.assigned.delete(session.id);
    if (render) renderAssigned();
  }

  async function onAssignment(data) {
    const sessionId = data.sessionId;
    if (!sessionId) return;
    const known = s.sessions.get(sessionId);
    if (known) c.upsertSession({ ...known, assigneeId: data.assigneeId ?? null, teamId: data.assignment?.teamId ?? known.teamId });
    if (data.assigneeId !== me.id) {
      if (s.assigned.delete(sessionId)) renderAssigned();
      return;
    }
    // The frame arrives on the agent's and the entities' channels: once is enough.
    if (s.assigned.has(sessionId)) return;
    let session;
    try {
      session = await api(`/chat/sessions/${encodeURIComponent(sessionId)}`);
    } catch {
      return;
    }
    if (session.assigneeId !== me.id || session.status === 'CLOSED' || s.assigned.has(sessionId)) return;
    delete session.messages;
    s.assigned.set(sessionId, session);
    renderAssigned();
    const reason = data.assignment?.reason === 'routing' ? ' by routing' : '';
    const said = `${session.visitorName || 'A visitor'}'s chat was assigned to you${reason}.`;
    toast(said);
    c.notices.show('Chat assigned to you', {
      body: said,
      tag: `assigned:${sessionId}`,
      onClick: () => {
        c.showView('chats');
        if (session.entityId && session.entityId !== s.entityId) c.switchEntity(session.entityId);
        c.openSession(sessionId);
      },
    });
  }

  function renderAssigned() {
    const shown = [...s.assigned.values()].sort((a, b) =>
      String(b.assignedAt ?? b.createdAt).localeCompare(String(a.assignedAt ?? a.createdAt)),
    );
    el.assignedList.replaceChildren(...shown.map(assignedItem));
    el.assignedEmpty.hidden = shown.length > 0;
    el.countAssigned.textContent = shown.length > 0 ? String(shown.length) : '';
  }

  function assignedItem(session) {
    const name = session.visitorName || 'Visitor';
    const entity = session.entityId !== s.entityId ? entities.find((e) => e.id === session.entityId) : null;
    const team = s.myTeams.get(session.teamId);
    const where = [entity?.name, team?.name].filter(Boolean).join(' · ');
    return h(
      'li',
      {},
      h(
        'button',
        {
          type: 'button',
          class: 'session assigned-item',
          'aria-current': session.id === s.openId ? 'true' : null,
          dataset: { id: session.id },
          onclick: () => {
            if (session.entityId && session.entityId !== s.entityId) c.switchEntity(session.entityId);
            c.openSession(session.id);
          },
        },
        h('span', { class: 'avatar', 'aria-hidden': 'true' }, initials(name)),
        h(
          'span',
          { class: 'session-main' },
          h(
            'span',
            { class: 'session-top' },
            h('span', { class: 'session-name' }, name),
            h('span', { class: 'session-time' }, shortTime(session.assignedAt ?? session.createdAt)),
          ),
          h('span', { class: 'session-preview' }, h('span', { class: 'session-preview-text' }, where || 'Assigned to you')),
        ),
      ),
    );
  }
}
