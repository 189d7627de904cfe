// SLA in the Tickets view: each ticket's badge (red once a metric breached,
// amber in its warning time, else the soonest due time), the `sla_due`
// order the list keeps when tickets change live, and the `sla.*` frames
// that turn a ticket amber or red while the list is open. The server's
// `sla.warning` (counted in business minutes) is the authority for amber;
// a list loaded later estimates it from the policy's `warnMinutes` in
// elapsed time, which is exact for around-the-clock policies.

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
const DEFAULT_WARN_MINUTES = 15;

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
  const { api } = c;
  const warned = new Map(); // ticket id -> due times an `sla.warning` named
  const warnMinutes = new Map(); // policy id -> warnMinutes
  let policiesLoaded = false;
  Object.assign(c, { slaBadge, onSlaEvent, loadSlaPolicies });

  async function loadSlaPolicies() {
    if (policiesLoaded) return;
    policiesLoaded = true;
    try {
      const { policies } = await api('/settings/sla-policies');
      for (const policy of policies ?? []) warnMinutes.set(policy.id, policy.warnMinutes ?? DEFAULT_WARN_MINUTES);
    } catch {
      // Without settings:read the amber comes from live warnings only.
    }
  }

  function state(ticket) {
    const sla = ticket.sla;
    if (!sla) return null;
    if ((sla.breaches ?? []).length > 0) return { kind: 'breached', due: soonestDue(ticket) };
    const due = soonestDue(ticket);
    if (!due) return sla.pausedAt ? { kind: 'paused' } : null;
    const warnedFor = warned.get(ticket.id);
    const windowMs = (warnMinutes.get(sla.policyId) ?? DEFAULT_WARN_MINUTES) * 60_000;
    const soon = warnMinutes.has(sla.policyId) && new Date(due.dueAt).getTime() - Date.now() <= windowMs;
    if (warnedFor?.has(due.dueAt) || soon) return { kind: 'warning', due };
    return { kind: 'running', due };
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
      h('time', { datetime: now.due.dueAt }, now.kind === 'warning' ? `Due soon · ${dueText(now.due.dueAt)}` : `Due ${dueText(now.due.dueAt)}`),
    );
  }

  /** `sla.warning`, `sla.breached`, `sla.fulfilled`: the ticket, as it is now. */
  function onSlaEvent(frame) {
    const data = frame.data?.data;
    if (!data?.id) return;
    const { slaEvent, ...ticket } = data;
    if (frame.type === 'sla.warning' && slaEvent?.dueAt) {
      const dueTimes = warned.get(ticket.id) ?? new Set();
      // The event's dueAt and the ticket's may differ in their precision.
      dueTimes.add(slaEvent.dueAt);
      const running = ticket.sla?.[DUE_FIELDS[slaEvent.metric]];
      if (running && new Date(running).getTime() === new Date(slaEvent.dueAt).getTime()) dueTimes.add(running);
      warned.set(ticket.id, dueTimes);
    }
    c.upsertTicket(ticket);
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
