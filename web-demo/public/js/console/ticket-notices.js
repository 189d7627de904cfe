// Desktop notifications of tickets that call for this agent: a ticket given
// to them by someone else (created assigned to them, or its assignee changed
// to them) and an internal note that mentions them (a `mention` frame on
// their own channel). Clicking one opens the ticket. Changes the agent made
// themselves (the frame's actor is them) notify no one.

export function setUpTicketNotices(c) {
  const { me } = c;

  const byMe = (actor) => actor?.type === 'agent' && actor.id === me.id;

  function openTicket(ticketId) {
    c.showTicketById(ticketId);
    c.el.ticketPage.focus();
  }

  /** A ticket event (`frame.data` is its webhook body): notifies when it gives the ticket to this agent. */
  function noticeTicketEvent(frame) {
    const event = frame.data;
    const ticket = event?.data;
    if (!ticket || byMe(event.actor) || ticket.assignedToId !== me.id) return;
    const given = frame.type === 'ticket.created' || (frame.type === 'ticket.updated' && ticket.changes?.assignedToId?.to === me.id);
    if (!given) return;
    c.notices.show('Ticket assigned to you', {
      body: `${ticket.ticketNumber}: ${ticket.subject}`,
      tag: `ticket-assigned:${ticket.id}`,
      onClick: () => openTicket(ticket.id),
    });
  }

  /** A `mention` frame: an internal note names this agent. */
  function noticeMention(frame) {
    const mention = frame.data;
    if (!mention?.ticketId) return;
    const who = frame.actor?.name ?? 'A teammate';
    const body = String(mention.body ?? '');
    c.notices.show(`${who} mentioned you`, {
      body: body.length > 140 ? `${body.slice(0, 139)}…` : body,
      tag: `mention:${mention.commentId}`,
      onClick: () => openTicket(mention.ticketId),
    });
  }

  Object.assign(c, { noticeTicketEvent, noticeMention });
}
