// What global search looks through, in the order its groups show: each kind
// of record with the API search that finds it (all four rank by the text)
// and how one of its hits reads in the results.

import { shortTime } from '../util.js';

/** Hits per kind: a glance, not a list (each kind's own view pages on). */
export const PER_KIND = 5;

const words = (status) =>
  String(status ?? '')
    .replace('_', ' ')
    .toLowerCase();

/**
 * Each kind: `kind` (its key), `counted` (one, many), `title` (the group's
 * heading), `path(q)` (the API search), and `describe(hit)`: `{label, detail}`.
 */
export const KINDS = Object.freeze([
  {
    kind: 'ticket',
    counted: ['ticket', 'tickets'],
    title: 'Tickets',
    // Every status: a solved ticket is found as readily as an open one.
    path: (q) => `/tickets?${new URLSearchParams({ q, limit: String(PER_KIND) })}`,
    describe: (ticket) => ({
      label: `${ticket.ticketNumber} ${ticket.subject}`,
      detail: [
        words(ticket.status),
        ticket.assignedTo ? `assigned to ${ticket.assignedTo.name}` : 'unassigned',
        shortTime(ticket.updatedAt),
      ]
        .filter(Boolean)
        .join(' · '),
    }),
  },
  {
    kind: 'chat',
    counted: ['chat', 'chats'],
    title: 'Chats',
    path: (q) => `/chat/sessions?${new URLSearchParams({ q, limit: String(PER_KIND) })}`,
    describe: (session) => ({
      label: session.visitorName || 'Visitor',
      detail: [session.visitorEmail, words(session.status), shortTime(session.createdAt)].filter(Boolean).join(' · '),
    }),
  },
  {
    kind: 'contact',
    counted: ['contact', 'contacts'],
    title: 'Contacts',
    path: (q) => `/contacts?${new URLSearchParams({ q, limit: String(PER_KIND) })}`,
    describe: (contact) => ({
      label: contact.name || contact.emails?.[0] || contact.phone || 'Contact',
      detail: [contact.name ? contact.emails?.[0] : null, contact.phone].filter(Boolean).join(' · '),
    }),
  },
  {
    kind: 'article',
    counted: ['article', 'articles'],
    title: 'Knowledge base',
    path: (q) => `/kb/search?${new URLSearchParams({ q, limit: String(PER_KIND) })}`,
    describe: (article) => ({
      label: article.title,
      detail: [article.category?.name, article.excerpt].filter(Boolean).join(' · '),
    }),
  },
]);
