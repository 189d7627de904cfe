// The Tickets view: the list (GET /tickets with the view's filters, newest
// first, a page of 50 at a time with cursors, so a thousand tickets stay
// light; or soonest SLA due time first, paged by offset), kept current from
// the `tickets` socket channel, with each ticket's SLA badge; an unread marker
// (in localStorage) on tickets someone else changed since this agent last
// opened them; and the keys j / k (move), Enter (open), r (reply), bound
// through the console's key table (keys.js). Above the filters, the inboxes
// (inbox.js): mine, unassigned, each of the agent's teams, all, and the
// saved views, with their counts; a saved view lists its own tickets
// (GET /views/{id}/tickets) and sets the filters aside.

import { listOf } from '../api.js';
import { $, debounce, h, placed, safeStorage, shortTime, toast } from '../util.js';
import { Inbox } from './inbox.js';
import { NewTicket } from './new-ticket.js';
import { byNewest, bySlaDue } from './sla.js';

const PAGE = 50;
const local = safeStorage('localStorage');

/** Sets this part up on the console `c` and adds its functions to it. */
export function setUpTickets(c) {
  const { el, me, api, on, entities } = c;
  const t = {
    view: 'chats',
    loaded: false,
    list: [], // tickets in list order
    next: null, // { after } or { offset } of the next page, or null
    selected: -1,
    openId: null,
    fresh: new Set(), // created by someone else while the list was open
    touched: new Set(), // commented on by someone else
    pending: new Map(), // ticket id -> own requests in flight
    generation: 0,
    loadingMore: false,
  };
  c.t = t;
  const seenItem = `sd-ticket-seen:${me.id}`;
  let seen = {};
  try {
    seen = JSON.parse(local.getItem(seenItem) ?? '{}') ?? {};
  } catch {
    seen = {};
  }
  Object.assign(c, { onTicketEvent, reloadTickets, noteOwnChange, markSeen, ownRequest, upsertTicket, showView, showTicketById });

  for (const entity of entities) el.tfEntity.append(h('option', { value: entity.id }, entity.name));
  const inboxes = placed(h('nav', { class: 'inbox-views', id: 'inbox-views', 'aria-label': 'Inboxes' }), (node) =>
    el.ticketFilters.before(node),
  );
  const inbox = new Inbox({
    api,
    me,
    host: inboxes,
    status: () => el.tfStatus.value,
    onPick: (view) => {
      // A saved view brings its own filters: the form's wait aside.
      el.ticketFilters.inert = Boolean(view.viewId);
      el.ticketFilters.classList.toggle('is-aside', Boolean(view.viewId));
      reloadTickets();
    },
  });

  const opener = placed(h('button', { type: 'button', class: 'btn btn-sm', id: 'new-ticket' }, 'New ticket'), (node) =>
    el.ticketFilters.parentElement.querySelector('.sessions-head').append(node),
  );
  new NewTicket({ api, entities, opener, onCreated: showTicket });

  /** Opens `ticket` (one just created), in the list if it fits. */
  function showTicket(ticket) {
    upsertTicket(ticket, true);
    t.openId = ticket.id;
    t.selected = t.list.findIndex((x) => x.id === ticket.id);
    markSeen(ticket);
    renderTickets();
    c.openTicket(ticket.id);
  }

  // --- Views ----------------------------------------------------------------------

  for (const button of el.views) {
    on(button, 'click', () => showView(button.dataset.view));
  }

  /** Opens ticket `id` in the Tickets view (from search: it may not be in the list). */
  function showTicketById(id) {
    showView('tickets');
    t.openId = id;
    t.selected = t.list.findIndex((x) => x.id === id);
    renderTickets();
    c.openTicket(id);
  }

  function showView(view) {
    t.view = view;
    for (const button of el.views) button.setAttribute('aria-pressed', String(button.dataset.view === view));
    el.layout.hidden = view !== 'chats';
    el.ticketsView.hidden = view !== 'tickets';
    if (view === 'tickets' && !t.loaded) {
      reloadTickets();
      inbox.load();
    }
  }

  // --- Loading --------------------------------------------------------------------------

  /** The list's query: the form's filters within the inbox picked. */
  function filters() {
    const inboxQuery = inbox.current.query ?? {};
    return {
      status: el.tfStatus.value,
      priority: el.tfPriority.value,
      assignedToId: inboxQuery.assignedToId ?? (el.tfAssignee.value === 'me' ? me.id : ''),
      assigned: inboxQuery.assigned ?? '',
      teamId: inboxQuery.teamId ?? '',
      entityId: el.tfEntity.value,
      slaBreached: el.tfSla.value,
      tag: el.tfTag.value.trim(),
      q: el.tfQ.value.trim(),
    };
  }

  async function loadPage(reset) {
    // One next page at a time (j near the end asks on every key).
    if (!reset && (t.loadingMore || !t.next)) return;
    const generation = reset ? ++t.generation : t.generation;
    if (!reset) t.loadingMore = true;
    const query = new URLSearchParams({ limit: String(PAGE) });
    const saved = inbox.current.viewId;
    if (!saved) {
      for (const [name, value] of Object.entries(filters())) if (value) query.set(name, value);
      if (el.tfOrder.value) query.set('order', el.tfOrder.value);
    }
    if (!reset && t.next?.after) query.set('after', t.next.after);
    const offset = reset ? 0 : (t.next?.offset ?? 0);
    if (offset) query.set('offset', String(offset));
    try {
      const path = saved ? `/views/${encodeURIComponent(saved)}/tickets` : '/tickets';
      const page = await api(`${path}?${query}`);
      if (generation !== t.generation) return;
      const rows = listOf(page);
      const known = reset ? [] : t.list;
      const ids = new Set(known.map((x) => x.id));
      t.list = [...known, ...rows.filter((x) => !ids.has(x.id))];
      if (page?.nextCursor) t.next = { after: page.nextCursor };
      else if (rows.length === PAGE) t.next = { offset: offset + rows.length };
      else t.next = null;
      t.loaded = true;
      if (reset) t.selected = Math.min(t.selected, t.list.length - 1);
      renderTickets();
    } catch (err) {
      if (err.status === 401) return c.signOut(`Signed out: ${err.message}.`);
      toast(`Could not load tickets: ${err.message}`, { error: true });
    } finally {
      if (!reset) t.loadingMore = false;
    }
  }

  function reloadTickets() {
    inbox.recount();
    return loadPage(true);
  }

  on(el.ticketsMore, 'click', () => loadPage(false));
  for (const control of [el.tfStatus, el.tfPriority, el.tfAssignee, el.tfEntity, el.tfSla, el.tfOrder]) {
    on(control, 'change', reloadTickets);
  }
  const typed = debounce(reloadTickets, 300);
  on(el.tfTag, 'input', typed);
  on(el.tfQ, 'input', typed);
  on(el.ticketFilters, 'submit', (event) => {
    event.preventDefault();
    reloadTickets();
  });

  // --- Unread -----------------------------------------------------------------------------

  function isUnread(ticket) {
    if (ticket.id === t.openId) return false;
    if (t.fresh.has(ticket.id) || t.touched.has(ticket.id)) return true;
    const last = seen[ticket.id];
    return Boolean(last && ticket.updatedAt > last);
  }

  function markSeen(ticket) {
    t.fresh.delete(ticket.id);
    t.touched.delete(ticket.id);
    seen[ticket.id] = ticket.updatedAt;
    const ids = Object.keys(seen);
    // Bounded: the oldest ids go first (they are UUIDv7, time-ordered).
    for (const id of ids.sort().slice(0, Math.max(0, ids.length - 2000))) delete seen[id];
    local.setItem(seenItem, JSON.stringify(seen));
  }

  /** Runs `work` (a request changing `ticketId`), its live echo being ours. */
  async function ownRequest(ticketId, work) {
    t.pending.set(ticketId, (t.pending.get(ticketId) ?? 0) + 1);
    try {
      const result = await work();
      if (result?.updatedAt && result.id === ticketId) noteOwnChange(result);
      return result;
    } finally {
      const left = (t.pending.get(ticketId) ?? 1) - 1;
      if (left > 0) t.pending.set(ticketId, left);
      else setTimeout(() => t.pending.delete(ticketId), 1500);
    }
  }

  function noteOwnChange(ticket) {
    if (seen[ticket.id] || ticket.id === t.openId) markSeen(ticket);
    upsertTicket(ticket);
  }

  // --- Live ------------------------------------------------------------------------------------

  function matches(ticket) {
    const f = filters();
    // Only the server ranks a search, or reads a saved view: ask it again.
    if (f.q || inbox.current.viewId) return null;
    if (f.status && ticket.status !== f.status) return false;
    if (f.priority && ticket.priority !== f.priority) return false;
    if (f.assignedToId && ticket.assignedToId !== f.assignedToId) return false;
    if (f.assigned === 'false' && ticket.assignedToId) return false;
    if (f.teamId && ticket.teamId !== f.teamId) return false;
    if (f.entityId && ticket.entityId !== f.entityId) return false;
    if (f.slaBreached && (ticket.sla?.breaches ?? []).length > 0 !== (f.slaBreached === 'true')) return false;
    if (f.tag && !(ticket.tags ?? []).includes(f.tag.toLowerCase())) return false;
    return true;
  }

  function upsertTicket(ticket, created = false) {
    const at = t.list.findIndex((x) => x.id === ticket.id);
    const fits = matches(ticket);
    if (fits === null) return typed();
    const bySla = el.tfOrder.value === 'sla_due';
    if (at >= 0) {
      const merged = { ...t.list[at], ...ticket };
      if (fits && !bySla) t.list[at] = merged;
      else t.list.splice(at, 1);
      // Sorted by due time, a change may move the ticket: put it back in place.
      if (fits && bySla) t.list.splice(insertionPoint(merged), 0, merged);
    } else if (fits && created && !bySla) t.list.unshift(ticket);
    else if (fits) t.list.splice(insertionPoint(ticket), 0, ticket);
    renderTickets();
  }

  /** Where the ticket goes in the list's order (newest first, or by SLA due time). */
  function insertionPoint(ticket) {
    const order = el.tfOrder.value === 'sla_due' ? bySlaDue : byNewest;
    const at = t.list.findIndex((x) => order(ticket, x) < 0);
    return at < 0 ? t.list.length : at;
  }

  function describe(type, data) {
    const changes = Object.entries(data.changes ?? {})
      .filter(([field]) => field !== 'tags' && field !== 'customFields')
      .map(([field, change]) => `${field} → ${change?.to ?? 'none'}`);
    if (type === 'ticket.escalated') return `escalated to ${data.assignedTo?.name ?? 'a teammate'}`;
    if (data.changes?.assignedToId) return `assigned to ${data.assignedTo?.name ?? 'nobody'}`;
    return changes.join(', ') || 'updated';
  }

  function onTicketEvent(frame) {
    const data = frame.data?.data;
    if (!data) return;
    inbox.recount();
    if (frame.type === 'comment.created') {
      const mine = data.authorId === me.id || t.pending.has(data.ticketId);
      if (!mine && data.ticketId !== t.openId) t.touched.add(data.ticketId);
      if (data.ticketId === t.openId) c.refreshTicketPage?.();
      renderTickets();
      return;
    }
    const { changes: _changes, escalation: _escalation, ...ticket } = data;
    const mine = t.pending.has(ticket.id);
    if (!mine && frame.type === 'ticket.created') t.fresh.add(ticket.id);
    upsertTicket(ticket, frame.type === 'ticket.created');
    if (ticket.id === t.openId) {
      if (mine) markSeen(ticket);
      c.refreshTicketPage?.();
    }
    // A new ticket shows in the list; a teammate's change says so too.
    if (!mine && frame.type !== 'ticket.created' && frame.type !== 'ticket.resolved') {
      toast(`${ticket.ticketNumber}: ${describe(frame.type, data)} (by a teammate)`);
    }
  }

  // --- Rendering ----------------------------------------------------------------------------------

  function renderTickets() {
    const items = t.list.map(ticketItem);
    el.ticketList.replaceChildren(...items);
    el.ticketsEmpty.hidden = t.list.length > 0;
    el.ticketsMore.hidden = !t.next;
    const unread = t.list.filter(isUnread).length;
    el.countTicketUnread.textContent = unread > 0 ? String(unread) : '';
  }

  function ticketItem(ticket, index) {
    const unread = isUnread(ticket);
    const classes = ['ticket-item'];
    if (unread) classes.push('is-unread');
    if (t.fresh.has(ticket.id)) classes.push('is-new');
    // An option of the list (role=listbox): j and k move its selection.
    return h(
      'li',
      { role: 'none' },
      h(
        'button',
        {
          type: 'button',
          role: 'option',
          class: classes.join(' '),
          'aria-selected': index === t.selected ? 'true' : 'false',
          'aria-current': ticket.id === t.openId ? 'true' : null,
          dataset: { id: ticket.id, number: ticket.ticketNumber, status: ticket.status },
          // By id: the list may have changed since this row was drawn.
          onclick: () => {
            const at = t.list.findIndex((x) => x.id === ticket.id);
            t.selected = Math.max(0, at);
            openSelected();
          },
        },
        h(
          'span',
          { class: 'ticket-top' },
          h('span', { class: 'mono' }, ticket.ticketNumber),
          h('span', { class: `prio-${ticket.priority}` }, ticket.priority),
          h('span', {}, ticket.status.replace('_', ' ')),
          h('span', {}, shortTime(ticket.updatedAt)),
          c.slaBadge(ticket),
        ),
        h('span', { class: 'ticket-subject' }, ticket.subject),
        unread ? h('span', { class: 'sr-only' }, 'unread') : null,
        h('span', { class: 'ticket-meta' }, ticket.assignedTo ? `Assigned to ${ticket.assignedTo.name}` : 'Unassigned'),
      ),
    );
  }

  function openSelected() {
    const ticket = t.list[t.selected];
    if (!ticket) return;
    t.openId = ticket.id;
    markSeen(ticket);
    renderTickets();
    c.openTicket(ticket.id);
  }

  function move(by) {
    if (t.list.length === 0) return;
    t.selected = Math.max(0, Math.min(t.list.length - 1, t.selected + by));
    renderTickets();
    const item = $(`.ticket-item[aria-selected="true"]`, el.ticketList);
    item?.scrollIntoView({ block: 'nearest' });
    item?.focus();
    // Near the end of what is loaded: fetch the next page ahead.
    if (t.next && t.selected >= t.list.length - 5) loadPage(false);
  }

  // The keys of the Tickets view (keys.js lists them under `?`).
  const inTickets = { when: () => t.view === 'tickets' };
  c.keys.bind('ticket-next', () => move(1), inTickets);
  c.keys.bind('ticket-previous', () => move(-1), inTickets);
  c.keys.bind(
    'ticket-open',
    (event) => {
      if (t.selected < 0 && !event.target.closest?.('.ticket-list')) return false;
      openSelected();
    },
    inTickets,
  );
  c.keys.bind(
    'ticket-reply',
    () => {
      if (!t.openId) return false;
      el.tdReply.focus();
    },
    inTickets,
  );
}
