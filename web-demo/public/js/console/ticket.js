// Turning the open chat into a ticket (the transcript as its description).

import { clockTime, toast } from '../util.js';

/** Sets this part up on the console `c` and adds its functions to it. */
export function setUpTicket(c) {
  const { el, s, api, on } = c;

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
      // Our own ticket: never unread in our Tickets view.
      c.markSeen(ticket);
      c.upsertTicket(ticket, true);
      el.dialog.close();
      c.renderThreadHead();
      toast(`Ticket ${ticket.ticketNumber ?? ''} created`);
      // A note in the conversation, which the visitor sees too.
      api(`/chat/sessions/${encodeURIComponent(session.id)}/messages`, {
        method: 'POST',
        body: {
          body: `Ticket ${ticket.ticketNumber ?? ticket.id} was created from this conversation.`,
          senderType: 'system',
        },
      })
        .then((message) => s.openId === session.id && c.appendMessage({ ...message, sessionId: session.id }))
        .catch(() => {});
    } catch (err) {
      el.ticketError.textContent = err.message;
      el.ticketError.hidden = false;
    } finally {
      el.ticketSubmit.disabled = false;
    }
  });
}
