// The one socket (opened with the session cookie), subscribed to
// presence, to the chat activity of the shown entity and of the agent's
// teams' entities, to the agent's own channel (the chats given to or taken
// from this agent, whichever entity they belong to), and to the company's
// tickets, and what its frames change.
// Frames of another entity than the shown one only feed the team parts
// (assignments, queue lengths); the conversation list is the shown entity's.

import { socketUrl } from '../api.js';
import { LiveSocket } from '../socket.js';
import { toast } from '../util.js';

/** Sets this part up on the console `c` and adds its functions to it. */
export function setUpLive(c) {
  const { el, s, me, api } = c;

  const socket = new LiveSocket({
    // The socket goes with the session cookie (this page is the service's
    // own origin). A browser hides why a handshake failed, so each
    // (re)connection first asks whether the session still holds: an ended
    // one answers 401 there, which signs the console out.
    url: async () => {
      await api('/auth/me');
      return socketUrl('/api/v1/ws');
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
        c.loadTeams();
        if (c.t?.loaded) c.reloadTickets();
        c.onSocketOpen?.();
      }
    },
  });
  socket.subscribe('presence');
  socket.subscribe('tickets');
  socket.subscribe(`agent:${me.id}`);

  /** A frame of an entity channel other than the shown entity's. */
  function fromElsewhere(frame) {
    return typeof frame.channel === 'string' && frame.channel.startsWith('entity:') && frame.channel !== `entity:${s.entityId}`;
  }

  function onFrame(frame) {
    const elsewhere = fromElsewhere(frame);
    switch (frame.type) {
      case 'chat.session':
        if (!frame.data) break;
        c.noteAssignedSession(frame.data);
        if (!elsewhere) c.upsertSession(frame.data);
        break;
      case 'chat.message':
        if (frame.data && !elsewhere) c.onMessage(frame.data);
        break;
      case 'typing':
        if (frame.data && !elsewhere) c.onTyping(frame.data);
        break;
      case 'assignment':
        if (frame.data) c.onAssignment(frame.data);
        break;
      case 'queue':
        if (frame.data) c.onQueue(frame.data);
        break;
      case 'sla.warning':
      case 'sla.breached':
      case 'sla.fulfilled':
        c.onSlaEvent(frame);
        break;
      case 'presence':
        if (frame.data) c.onPresence(frame.data);
        break;
      case 'viewing':
        if (frame.data) c.onViewing?.(frame.data);
        break;
      case 'ticket.created':
      case 'ticket.updated':
      case 'ticket.resolved':
      case 'ticket.escalated':
      case 'comment.created':
        c.noticeTicketEvent(frame);
        c.onTicketEvent(frame);
        break;
      case 'mention':
        c.noticeMention(frame);
        break;
      case 'error':
        toast(frame.error ?? 'Something went wrong', { error: true });
        break;
      default:
        break;
    }
  }

  c.socket = socket;
  c.syncEntityChannels();
}
