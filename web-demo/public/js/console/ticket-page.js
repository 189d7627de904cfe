// The ticket page of the Tickets view: the SLA (each metric due, met or
// breached; paused), the description, the comments and internal notes (notes
// drawn apart: visitors never see them), the activity timeline, and the
// actions: comment or note (Ctrl+Enter sends), status, priority, assignee
// (me or a teammate), escalation with a reason. A change that arrives live
// reloads the page; an `sla.*` frame redraws its SLA at once.
// Collision: who else views or types on the ticket shows under its title
// (watching.js), and a reply or change is sent with the version it is based
// on (a reply: the version when its draft began), so one made on a stale
// view is stopped with what changed since (conflict.js).

import { listOf } from '../api.js';
import { debounce, h, placed, shortTime, toast } from '../util.js';
import { showConflict, staleView } from './conflict.js';
import { draftsOf } from './drafts.js';
import { matches } from './keys.js';
import { TicketMeta } from './ticket-meta.js';
import { TicketWatch } from './watching.js';

/** Sets this part up on the console `c` and adds its functions to it. */
export function setUpTicketPage(c) {
  const { el, me, api, on } = c;
  // `basedOn`: the ticket's version the reply being written is based on.
  const page = { ticket: null, users: [], generation: 0, draftFor: null, watch: null, basedOn: null, changing: Promise.resolve() };
  const drafts = draftsOf(me.id);
  const watchers = placed(h('p', { class: 'collision', id: 'td-collision', role: 'status', 'aria-live': 'polite', hidden: true }), (node) =>
    el.tdSub.after(node),
  );
  const conflictBox = placed(h('div', { class: 'conflict', id: 'td-conflict', role: 'alert', hidden: true }), (node) =>
    el.tdComposer.before(node),
  );
  const metaBox = placed(h('section', { class: 'ticket-meta', id: 'td-meta', 'aria-label': 'Tags and fields' }), (node) =>
    el.tdSla.before(node),
  );
  const meta = new TicketMeta({ api, host: metaBox, save: (body) => change(body) });
  Object.assign(c, {
    openTicket,
    showTicketSla,
    refreshTicketPage: debounce(() => load(page.ticket?.id), 150),
    onViewing: (data) => page.watch?.onViewing(data),
    onSocketOpen: () => page.watch?.reconnected(),
  });
  // A sign-in starts with no ticket open: the page an earlier session left
  // on screen (signed out in this tab) is not this session's.
  el.ticketDetail.hidden = true;
  el.ticketEmpty.hidden = false;
  el.tdNumber.textContent = '';

  /** Says which ticket this agent is on (and leaves the one before). */
  function watch(id) {
    if (page.watch?.ticketId === id) return;
    page.watch?.stop();
    page.watch = new TicketWatch({ socket: c.socket, ticketId: id, myId: me.id, bar: watchers });
    page.watch.start();
  }

  async function loadUsers() {
    try {
      page.users = listOf(await api('/users?limit=100'));
    } catch {
      page.users = [{ id: me.id, name: me.name, email: me.email }];
    }
    if (!page.users.some((u) => u.id === me.id)) page.users.push({ id: me.id, name: me.name, email: me.email });
    const options = () => page.users.map((u) => h('option', { value: u.id }, u.id === me.id ? `${u.name} (me)` : u.name));
    el.tdAssignee.replaceChildren(h('option', { value: '' }, 'Unassigned'), ...options());
    el.escalateTo.replaceChildren(...options());
  }

  async function openTicket(id) {
    if (page.users.length === 0) await loadUsers();
    el.ticketEmpty.hidden = true;
    el.ticketDetail.hidden = false;
    watch(id);
    await load(id);
  }

  async function load(id) {
    if (!id) return;
    const generation = ++page.generation;
    const path = `/tickets/${encodeURIComponent(id)}`;
    try {
      const [ticket, comments, activities] = await Promise.all([
        api(path),
        api(`${path}/comments?limit=100`),
        api(`${path}/activities?limit=100`),
      ]);
      if (generation !== page.generation) return;
      page.ticket = ticket;
      if (page.draftFor !== ticket.id) {
        // Another ticket: its own draft, if one was kept.
        page.draftFor = ticket.id;
        page.basedOn = null;
        conflictBox.hidden = true;
        el.tdReply.value = drafts.get('ticket', ticket.id);
      }
      // A reply not yet begun is based on what the agent sees now.
      if (page.basedOn === null || !el.tdReply.value.trim()) page.basedOn = ticket.version;
      if (c.t.openId === ticket.id) c.markSeen(ticket);
      c.upsertTicket(ticket);
      render(ticket, listOf(comments), listOf(activities));
    } catch (err) {
      toast(`Could not load the ticket: ${err.message}`, { error: true });
    }
  }

  function render(ticket, comments, activities) {
    el.tdNumber.textContent = ticket.ticketNumber;
    el.tdSubject.textContent = ticket.subject;
    const assignee = ticket.assignedTo ? `assigned to ${ticket.assignedTo.name}` : 'unassigned';
    el.tdSub.textContent = `Opened ${shortTime(ticket.createdAt)} · ${assignee}${ticket.visitorEmail ? ` · ${ticket.visitorEmail}` : ''}`;
    el.tdStatus.value = ticket.status;
    el.tdPriority.value = ticket.priority;
    el.tdAssignee.value = ticket.assignedToId ?? '';
    renderSla(ticket);
    meta.show(ticket);
    el.tdDescription.textContent = ticket.description || 'No description.';
    const entries = [
      ...comments.map((comment) => ({ at: comment.createdAt, node: commentEntry(comment) })),
      ...activities.filter((a) => a.type !== 'commented').map((a) => ({ at: a.createdAt, node: activityEntry(a) })),
    ].sort((a, b) => String(a.at).localeCompare(String(b.at)));
    el.tdTimeline.replaceChildren(...entries.map((e) => e.node));
  }

  function renderSla(ticket) {
    const rows = c.slaPanel(ticket);
    el.tdSla.hidden = rows.length === 0;
    el.tdSlaRows.replaceChildren(...rows);
  }

  /** The open ticket's SLA as a frame brought it (a newer state of the ticket). */
  function showTicketSla(ticket) {
    if (!page.ticket || page.ticket.id !== ticket.id) return;
    page.ticket = { ...page.ticket, sla: ticket.sla };
    renderSla(ticket);
  }

  function commentEntry(comment) {
    const author = comment.author?.name ?? 'Someone';
    return h(
      'li',
      {
        class: comment.isInternal ? 'entry-note' : 'entry-comment',
        dataset: { id: comment.id, authorId: comment.author?.id ?? '' },
      },
      h(
        'div',
        { class: 'entry-head' },
        comment.isInternal ? h('span', { class: 'note-label' }, 'Internal note') : null,
        `${author} · ${shortTime(comment.createdAt)}`,
      ),
      h('div', { class: 'entry-body' }, comment.body),
    );
  }

  /** One change in the timeline, with who made it (`actor`). */
  function activityEntry(activity) {
    const by = activity.actor?.name ? ` · by ${activity.actor.id === me.id ? `${activity.actor.name} (you)` : activity.actor.name}` : '';
    return h(
      'li',
      { class: 'entry-activity', dataset: { type: activity.type, actorId: activity.actor?.id ?? '' } },
      `${shortTime(activity.createdAt)} · ${activityText(activity)}${by}`,
    );
  }

  function activityText(activity) {
    const change = `${activity.from ?? 'none'} → ${activity.to ?? 'none'}`;
    switch (activity.type) {
      case 'created':
        return 'Ticket created';
      case 'status_changed':
        return `Status ${change}`;
      case 'priority_changed':
        return `Priority ${change}`;
      case 'assignee_changed': {
        const name = page.users.find((u) => u.id === activity.to)?.name;
        return activity.to ? `Assigned to ${name ?? activity.to}` : 'Unassigned';
      }
      case 'escalated':
        return `Escalated${activity.details?.reason ? `: ${activity.details.reason}` : ''}`;
      case 'tags_changed':
        return 'Tags changed';
      default:
        return activity.type.replaceAll('_', ' ');
    }
  }

  /**
   * A change to the ticket, based on the version shown (or `version`). One at
   * a time: a change made while the one before is on its way is based on
   * what that one answers, not refused for it.
   */
  function change(body, version) {
    const run = page.changing.then(() => changeNow(body, version ?? page.ticket?.version));
    page.changing = run.catch(() => {});
    return run;
  }

  async function changeNow(body, version) {
    const ticket = page.ticket;
    if (!ticket) return;
    // A reply being written on the version changed here stays current: the
    // agent made this change themselves.
    const draftWasCurrent = page.basedOn === ticket.version;
    try {
      const updated = await c.ownRequest(ticket.id, () =>
        api(`/tickets/${encodeURIComponent(ticket.id)}`, { method: 'PATCH', body, ifMatch: version }),
      );
      page.ticket = updated;
      if (draftWasCurrent) page.basedOn = updated.version;
      await load(updated.id);
    } catch (err) {
      const conflict = staleView(err);
      if (conflict) {
        showConflict(conflictBox, conflict, {
          what: 'Your change',
          users: page.users,
          sendAnyway: (now) => change(body, now),
          reread: () => load(ticket.id),
        });
        return;
      }
      toast(err.message, { error: true });
      await load(ticket.id);
    }
  }

  on(el.tdStatus, 'change', () => change({ status: el.tdStatus.value }));
  on(el.tdPriority, 'change', () => change({ priority: el.tdPriority.value }));
  on(el.tdAssignee, 'change', () => change({ assignedToId: el.tdAssignee.value || null }));
  on(el.tdAssignMe, 'click', () => change({ assignedToId: me.id }));

  /** Sends the reply or note, based on the version its draft began at (or `version`). */
  async function sendComment(version = page.basedOn) {
    const ticket = page.ticket;
    const body = el.tdReply.value.trim();
    if (!ticket || !body) return;
    const isInternal = el.tdInternal.checked;
    el.tdSend.disabled = true;
    try {
      await c.ownRequest(ticket.id, () =>
        api(`/tickets/${encodeURIComponent(ticket.id)}/comments`, {
          method: 'POST',
          body: { body, isInternal },
          ifMatch: version ?? undefined,
        }),
      );
      el.tdReply.value = '';
      conflictBox.hidden = true;
      drafts.clear('ticket', ticket.id);
      page.basedOn = null;
      await load(ticket.id);
    } catch (err) {
      const conflict = staleView(err);
      if (conflict) {
        showConflict(conflictBox, conflict, {
          what: isInternal ? 'Your note' : 'Your reply',
          users: page.users,
          sendAnyway: (now) => sendComment(now),
          reread: () => {
            // The draft stays, now based on the ticket as it is.
            page.basedOn = null;
            load(ticket.id).then(() => el.tdReply.focus());
          },
        });
        return;
      }
      toast(err.message, { error: true });
    } finally {
      el.tdSend.disabled = false;
    }
  }

  on(el.tdReply, 'input', () => {
    if (page.ticket && page.draftFor === page.ticket.id) drafts.set('ticket', page.ticket.id, el.tdReply.value);
    // An emptied composer starts over from the ticket as shown.
    if (page.ticket && !el.tdReply.value.trim()) page.basedOn = page.ticket.version;
    else page.watch?.typed();
  });
  on(el.tdComposer, 'submit', (event) => {
    event.preventDefault();
    sendComment();
  });
  on(el.tdReply, 'keydown', (event) => {
    if (matches('comment-send', event)) {
      event.preventDefault();
      sendComment();
    }
  });

  on(el.tdEscalate, 'click', () => {
    if (!page.ticket) return;
    el.escalateReason.value = '';
    el.escalateError.hidden = true;
    el.escalateDialog.showModal();
    el.escalateReason.focus();
  });
  on(el.escalateCancel, 'click', () => el.escalateDialog.close());
  on(el.escalateForm, 'submit', async (event) => {
    event.preventDefault();
    const ticket = page.ticket;
    const reason = el.escalateReason.value.trim();
    if (!ticket || !reason) {
      el.escalateError.textContent = 'A reason is required.';
      el.escalateError.hidden = false;
      return;
    }
    el.escalateSubmit.disabled = true;
    try {
      await c.ownRequest(ticket.id, () =>
        api(`/tickets/${encodeURIComponent(ticket.id)}/escalate`, {
          method: 'POST',
          body: { escalateToId: el.escalateTo.value, reason },
        }),
      );
      el.escalateDialog.close();
      await load(ticket.id);
    } catch (err) {
      el.escalateError.textContent = err.message;
      el.escalateError.hidden = false;
    } finally {
      el.escalateSubmit.disabled = false;
    }
  });
}
