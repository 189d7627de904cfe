// The ticket page of the Tickets view: the SLA (each metric due, met or
// breached; paused), the description, the comments and internal notes (notes
// drawn apart: visitors never see them), the activity timeline, and the
// actions: comment or note (Ctrl+Enter sends), status, priority, assignee
// (me or a teammate), escalation with a reason. A change that arrives live
// reloads the page; an `sla.*` frame redraws its SLA at once.

import { listOf } from '../api.js';
import { debounce, h, shortTime, toast } from '../util.js';
import { draftsOf } from './drafts.js';

/** Sets this part up on the console `c` and adds its functions to it. */
export function setUpTicketPage(c) {
  const { el, me, api, on } = c;
  const page = { ticket: null, users: [], generation: 0, draftFor: null };
  const drafts = draftsOf(me.id);
  Object.assign(c, { openTicket, showTicketSla, refreshTicketPage: debounce(() => load(page.ticket?.id), 150) });

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
        el.tdReply.value = drafts.get('ticket', ticket.id);
      }
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
    el.tdDescription.textContent = ticket.description || 'No description.';
    const entries = [
      ...comments.map((comment) => ({ at: comment.createdAt, node: commentEntry(comment) })),
      ...activities
        .filter((a) => a.type !== 'commented')
        .map((a) => ({ at: a.createdAt, node: activityEntry(a) })),
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

  async function change(body) {
    const ticket = page.ticket;
    if (!ticket) return;
    try {
      const updated = await c.ownRequest(ticket.id, () =>
        api(`/tickets/${encodeURIComponent(ticket.id)}`, { method: 'PATCH', body }),
      );
      page.ticket = updated;
      await load(updated.id);
    } catch (err) {
      toast(err.message, { error: true });
      await load(ticket.id);
    }
  }

  on(el.tdStatus, 'change', () => change({ status: el.tdStatus.value }));
  on(el.tdPriority, 'change', () => change({ priority: el.tdPriority.value }));
  on(el.tdAssignee, 'change', () => change({ assignedToId: el.tdAssignee.value || null }));
  on(el.tdAssignMe, 'click', () => change({ assignedToId: me.id }));

  async function sendComment() {
    const ticket = page.ticket;
    const body = el.tdReply.value.trim();
    if (!ticket || !body) return;
    el.tdSend.disabled = true;
    try {
      await c.ownRequest(ticket.id, () =>
        api(`/tickets/${encodeURIComponent(ticket.id)}/comments`, {
          method: 'POST',
          body: { body, isInternal: el.tdInternal.checked },
        }),
      );
      el.tdReply.value = '';
      drafts.clear('ticket', ticket.id);
      await load(ticket.id);
    } catch (err) {
      toast(err.message, { error: true });
    } finally {
      el.tdSend.disabled = false;
    }
  }

  on(el.tdReply, 'input', () => {
    if (page.ticket && page.draftFor === page.ticket.id) drafts.set('ticket', page.ticket.id, el.tdReply.value);
  });
  on(el.tdComposer, 'submit', (event) => {
    event.preventDefault();
    sendComment();
  });
  on(el.tdReply, 'keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
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
