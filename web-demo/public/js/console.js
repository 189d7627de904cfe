// Agent console, part two: the workspace (Chats and Tickets), for the
// signed-in agent. Each concern is a module of console/ that sets itself up
// on one shared console object `c` (me, the elements, the state, the API
// helper, the socket, the key handler, and the functions the parts call one
// another by); the order below is the order the page wires itself. Newer
// parts (search, the shortcuts list) are classes given what they use.

import { request } from './api.js';
import { setUpAssigned } from './console/assigned.js';
import { setUpComposer } from './console/composer.js';
import { setUpConversation } from './console/conversation.js';
import { consoleElements } from './console/elements.js';
import { ENTITY_ITEM, setUpEntities } from './console/entities.js';
import { setUpFields } from './console/fields.js';
import { KeyHandler } from './console/keys.js';
import { setUpLive } from './console/live.js';
import { DesktopNotices } from './console/notify.js';
import { Peek } from './console/peek.js';
import { setUpPresence } from './console/presence.js';
import { Search } from './console/search.js';
import { setUpSessions } from './console/sessions.js';
import { ShortcutsDialog } from './console/shortcuts-dialog.js';
import { setUpSla } from './console/sla.js';
import { setUpTags } from './console/tags.js';
import { setUpTeam } from './console/team.js';
import { setUpTeams } from './console/teams.js';
import { setUpTicket } from './console/ticket.js';
import { setUpTicketNotices } from './console/ticket-notices.js';
import { setUpTicketPage } from './console/ticket-page.js';
import { setUpTickets } from './console/tickets.js';
import { setUpTyping } from './console/typing.js';

export async function startConsole({ me, session, entities, storage, onSignOut }) {
  const el = consoleElements();

  // Every listener dies with this console (sign out, then sign in again).
  const lifetime = new AbortController();
  const on = (target, type, listener) => target.addEventListener(type, listener, { signal: lifetime.signal });

  const savedEntity = storage.getItem(ENTITY_ITEM);
  const s = {
    entityId: entities.some((e) => e.id === savedEntity) ? savedEntity : entities[0].id,
    filter: 'ACTIVE',
    sessions: new Map(), // id -> session (no messages)
    preview: new Map(), // id -> last message
    activity: new Map(), // id -> ISO time of the last activity
    unread: new Set(),
    fresh: new Set(), // sessions that just appeared (flash once)
    typingIn: new Map(), // session id -> timer
    openId: null,
    open: null, // the open session
    rendered: new Map(), // message id -> <li>
    team: new Map(), // user id -> presence
    tickets: new Map(), // session id -> ticket
    online: true,
    heartbeat: null,
    opened: false,
    stopped: false,
  };

  // Every call goes with the session cookie and its CSRF token. A 401 means
  // the session ended (expired, idle, signed out elsewhere): back to the
  // sign-in, the drafts kept (see drafts.js).
  const api = async (path, options = {}) => {
    try {
      return await request(`/api/v1${path}`, { ...options, cookie: true, csrf: session.csrf });
    } catch (err) {
      if (err.status === 401) signOut('Your session ended. Sign in again: your drafts are kept.', { ended: true });
      throw err;
    }
  };

  // The page-wide keyboard shortcuts: the parts bind theirs (keys.js).
  const keys = new KeyHandler(lifetime.signal);
  const c = { me, session, entities, storage, el, s, api, on, signOut, keys };
  c.notices = new DesktopNotices({ button: el.notifyButton, signal: lifetime.signal });
  setUpPresence(c);
  setUpEntities(c);
  setUpTeams(c);
  setUpAssigned(c);
  setUpLive(c);
  setUpSessions(c);
  setUpTyping(c);
  setUpConversation(c);
  setUpComposer(c);
  setUpTags(c);
  setUpFields(c);
  setUpTicket(c);
  setUpTeam(c);
  setUpSla(c);
  setUpTickets(c);
  setUpTicketPage(c);
  setUpTicketNotices(c);

  // --- Search and the list of shortcuts -----------------------------------------------

  /** Opens chat `id` in the Chats view. */
  function openChat(id) {
    c.showView('chats');
    el.main.focus();
    c.openSession(id);
  }

  function openTicket(id) {
    c.showTicketById(id);
    el.ticketPage.focus();
  }

  const peek = new Peek({ api, openTicket, openChat });
  const search = new Search({
    api,
    onOpen: (kind, hit, returnTo) => {
      if (kind === 'ticket') openTicket(hit.id);
      else if (kind === 'chat') openChat(hit.id);
      else if (kind === 'contact') peek.showContact(hit, returnTo);
      else peek.showArticle(hit, returnTo);
    },
  });
  const shortcuts = new ShortcutsDialog();
  keys.bind('search', () => search.open());
  keys.bind('shortcuts', () => shortcuts.open());
  on(el.searchButton, 'click', () => search.open());
  on(el.shortcutsButton, 'click', () => shortcuts.open());

  // --- Layout and signing out -------------------------------------------------------

  // A narrow top bar wraps onto more rows; the team panel opens below it.
  const topbar = el.sideToggle.closest('.topbar');
  const fitSide = new ResizeObserver(() => el.side.style.setProperty('--topbar-height', `${topbar.offsetHeight}px`));
  fitSide.observe(topbar);
  lifetime.signal.addEventListener('abort', () => fitSide.disconnect());

  on(el.sideToggle, 'click', () => {
    const open = !el.side.classList.contains('is-open');
    el.side.classList.toggle('is-open', open);
    el.sideToggle.setAttribute('aria-expanded', String(open));
  });

  /** Leaves the console: `ended` when the session is gone already. */
  async function signOut(reason, { ended = false } = {}) {
    if (s.stopped) return;
    s.stopped = true;
    clearInterval(s.heartbeat);
    c.socket.stop();
    if (!ended) {
      const call = (path, method) => request(`/api/v1${path}`, { method, cookie: true, csrf: session.csrf }).catch(() => {});
      if (s.online) await call(`/chat/agent-presence/${encodeURIComponent(me.id)}`, 'DELETE');
      await call('/auth/logout', 'POST');
    }
    lifetime.abort();
    c.closeThread();
    s.sessions.clear();
    el.list.replaceChildren();
    el.team.replaceChildren();
    el.assignedList.replaceChildren();
    onSignOut(reason);
  }

  on(el.signOut, 'click', () => signOut());

  // --- Go --------------------------------------------------------------------------------

  c.showWidgetLink();
  c.setOnline(true);
  c.renderTeam();
  c.renderSessions();
  c.renderAssigned();
  c.loadSessions();
  c.loadTeams();
  c.socket.start();
}
