// SLA in the Tickets view: each ticket's badge (red once a metric breached,
// amber once the server sent a running metric's warning, `sla.warned`,
// else the soonest due time), the ticket page's SLA panel (each metric due,
// met or breached, and since when the clocks stand), the `sla_due` order
// the list keeps when tickets change live, and the `sla.*` frames that
// update both while they are open.

import { clockTime, h, shortTime, toast } from '../util.js';

const METRICS = {
  firstResponse: 'First response',
  nextResponse: 'Next response',
  resolution: 'Resolution',
};
const DUE_FIELDS = {
  firstResponse: 'firstResponseDueAt',
  nextResponse: 'nextResponseDueAt',
  resolution: 'resolutionDueAt',
};

/** The running clock due soonest: {metric, dueAt}, or null. */
export function soonestDue(ticket) {
  let soonest = null;
  for (const [metric, field] of Object.entries(DUE_FIELDS)) {
    const dueAt = ticket.sla?.[field];
    if (dueAt && (!soonest || dueAt < soonest.dueAt)) soonest = { metric, dueAt };
  }
  return soonest;
}

/** The list's order for `order=sla_due`: soonest due first, none last, then newest. */
export function bySlaDue(a, b) {
  const dueA = soonestDue(a)?.dueAt;
  const dueB = soonestDue(b)?.dueAt;
  if (dueA && dueB && dueA !== dueB) return dueA < dueB ? -1 : 1;
  if (dueA && !dueB) return -1;
  if (!dueA && dueB) return 1;
  return byNewest(a, b);
}

/** The list's default order: newest first (createdAt, then id). */
export function byNewest(a, b) {
  if (a.createdAt !== b.createdAt) return String(a.createdAt) < String(b.createdAt) ? 1 : -1;
  return String(a.id) < String(b.id) ? 1 : -1;
}

/** Sets this part up on the console `c` and adds its functions to it. */
export function setUpSla(c) {
  Object.assign(c, { slaBadge, slaPanel, onSlaEvent });

  function state(ticket) {
    const sla = ticket.sla;
    if (!sla) return null;
    if ((sla.breaches ?? []).length > 0) return { kind: 'breached', due: soonestDue(ticket) };
    const due = soonestDue(ticket);
    if (!due) return sla.pausedAt ? { kind: 'paused' } : null;
    // A metric still due whose warning went out: its due time is near.
    const warned = Object.keys(DUE_FIELDS).some((metric) => sla[DUE_FIELDS[metric]] && sla.warned?.[metric]);
    return { kind: warned ? 'warning' : 'running', due };
  }

  /** The badge of a ticket's SLA in the list, or null without one. */
  function slaBadge(ticket) {
    const now = state(ticket);
    if (!now) return null;
    if (now.kind === 'paused') {
      return h('span', { class: 'badge sla-badge', dataset: { sla: 'paused' } }, 'SLA paused');
    }
    if (now.kind === 'breached') {
      const metrics = ticket.sla.breaches.map((b) => METRICS[b.metric] ?? b.metric).join(', ');
      return h(
        'span',
        { class: 'badge badge-danger sla-badge', dataset: { sla: 'breached' }, title: `SLA breached: ${metrics}` },
        'SLA breached',
      );
    }
    const label = `${METRICS[now.due.metric] ?? 'SLA'} due ${dueText(now.due.dueAt)}`;
    return h(
      'span',
      {
        class: `badge sla-badge${now.kind === 'warning' ? ' badge-warn' : ''}`,
        dataset: { sla: now.kind },
        title: now.kind === 'warning' ? `Due soon: ${label}` : label,
      },
      h(
        'time',
        { datetime: now.due.dueAt },
        now.kind === 'warning' ? `Due soon · ${dueText(now.due.dueAt)}` : `Due ${dueText(now.due.dueAt)}`,
      ),
    );
  }

  /**
   * The ticket page's SLA: one row per metric the ticket has a clock for
   * (breached, met, due soon or due), and since when its clocks stand;
   * empty without an SLA.
   */
  function slaPanel(ticket) {
    const sla = ticket.sla;
    if (!sla) return [];
    const rows = [];
    for (const [metric, field] of Object.entries(DUE_FIELDS)) {
      const breach = (sla.breaches ?? []).find((b) => b.metric === metric);
      const met = sla.fulfilled?.[metric];
      const due = sla[field];
      let status = null;
      let text = '';
      if (breach) {
        status = 'breached';
        text = `Breached ${dueText(breach.breachedAt)}${met ? ` · met ${dueText(met)}` : ''}`;
      } else if (met) {
        status = 'met';
        text = `Met ${dueText(met)}`;
      } else if (due) {
        status = sla.warned?.[metric] ? 'warning' : 'running';
        text = `${status === 'warning' ? 'Due soon' : 'Due'} ${dueText(due)}`;
      }
      if (!status) continue;
      rows.push(
        h(
          'li',
          { class: `sla-row sla-${status}`, dataset: { metric, sla: status } },
          h('span', { class: 'sla-metric' }, METRICS[metric]),
          h('time', { datetime: breach?.breachedAt ?? met ?? due }, text),
        ),
      );
    }
    if (sla.pausedAt) {
      rows.push(
        h(
          'li',
          { class: 'sla-row sla-paused', dataset: { sla: 'paused' } },
          h('span', { class: 'sla-metric' }, 'Paused'),
          `since ${dueText(sla.pausedAt)}`,
        ),
      );
    }
    return rows;
  }

  /** `sla.warning`, `sla.breached`, `sla.fulfilled`: the ticket, as it is now. */
  function onSlaEvent(frame) {
    const data = frame.data?.data;
    if (!data?.id) return;
    const { slaEvent, ...ticket } = data;
    c.upsertTicket(ticket);
    c.showTicketSla?.(ticket);
    if (frame.type === 'sla.breached') {
      toast(`${ticket.ticketNumber}: ${METRICS[slaEvent?.metric] ?? 'SLA'} breached`, { error: true });
    }
  }
}

/** "14:05" today, "Nov 21 14:05" on another day. */
function dueText(iso) {
  const day = shortTime(iso);
  const time = clockTime(iso);
  return day === time ? time : `${day} ${time}`;
}
