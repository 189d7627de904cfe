// The one socket (a fresh short-lived token per connection), subscribed to
// presence, to the entity's chat activity and to the company's tickets, and
// what its frames change.

import { socketUrl } from '../api.js';
import { LiveSocket } from '../socket.js';
import { toast } from '../util.js';

/** Sets this part up on the console `c` and adds its functions to it. */
export function setUpLive(c) {
  const { el, s, api } = c;

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
      if (status === 'closed' && detail?.error?.status === 401) c.signOut(`Signed out: ${detail.error.message}.`);
      if (live) {
        // After (re)subscribing, fetch a fresh snapshot: nothing missed.
        c.loadSessions();
        c.loadTeam();
        if (c.t?.loaded) c.reloadTickets();
      }
    },
  });
  socket.subscribe('presence');
  socket.subscribe(`entity:${s.entityId}`);
  socket.subscribe('tickets');

  function onFrame(frame) {
    switch (frame.type) {
      case 'chat.session':
        if (frame.data) c.upsertSession(frame.data);
        break;
      case 'chat.message':
        if (frame.data) c.onMessage(frame.data);
        break;
      case 'typing':
        if (frame.data) c.onTyping(frame.data);
        break;
      case 'presence':
        if (frame.data) c.onPresence(frame.data);
        break;
      case 'ticket.created':
      case 'ticket.updated':
      case 'ticket.resolved':
      case 'ticket.escalated':
      case 'comment.created':
        c.onTicketEvent(frame);
        break;
      case 'error':
        toast(frame.error ?? 'Something went wrong', { error: true });
        break;
      default:
        break;
    }
  }

  c.socket = socket;
}
