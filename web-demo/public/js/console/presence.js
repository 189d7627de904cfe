// Who I am, and my presence: the heartbeat every 15 s while online, removed
// at once when going away or leaving the page.

import { initials, toast } from '../util.js';

const HEARTBEAT_MS = 15_000;

/** The role as the agent reads it: built-in ones capitalised, custom as named. */
function roleLabel(roleName) {
  const builtIn = { owner: 'Owner', admin: 'Admin', agent: 'Agent', viewer: 'Viewer' };
  return builtIn[roleName] ?? roleName ?? '';
}

/** Sets this part up on the console `c` and adds its functions to it. */
export function setUpPresence(c) {
  const { el, s, me, session, api, on } = c;
  Object.assign(c, { setOnline });

  el.meAvatar.textContent = initials(me.name);
  el.meName.textContent = me.name;
  el.meEmail.textContent = `${me.email} · ${me.visibility === 'PRIVATE' ? 'private' : 'public'}`;
  el.meRole.textContent = [roleLabel(me.roleName), me.mode === 'TEST' ? 'TEST data' : null].filter(Boolean).join(' · ');

  async function beat() {
    try {
      await api('/chat/agent-presence', {
        method: 'POST',
        body: { userId: me.id, visibility: me.visibility },
      });
    } catch (err) {
      if (err.status === 401) return;
      toast(`Could not refresh your presence: ${err.message}`, { error: true });
    }
  }

  function setOnline(online) {
    s.online = online;
    clearInterval(s.heartbeat);
    el.statusToggle.setAttribute('aria-pressed', String(online));
    el.statusDot.className = online ? 'dot dot-ok' : 'dot dot-warn';
    el.statusText.textContent = online ? 'Online' : 'Away';
    el.statusToggle.title = online ? 'You are online: click to go away' : 'You are away: click to go online';
    if (online) {
      beat();
      s.heartbeat = setInterval(beat, HEARTBEAT_MS);
    } else {
      api(`/chat/agent-presence/${encodeURIComponent(me.id)}`, { method: 'DELETE' }).catch(() => {});
    }
  }

  on(el.statusToggle, 'click', () => setOnline(!s.online));

  // Leaving the page (tab closed, navigation): offline at once, not after 30 s.
  let left = false;
  const leave = () => {
    if (!s.online || s.stopped || left) return;
    left = true;
    clearInterval(s.heartbeat);
    fetch(`/api/v1/chat/agent-presence/${encodeURIComponent(me.id)}`, {
      method: 'DELETE',
      headers: { 'X-CSRF-Token': session.csrf },
      keepalive: true,
      credentials: 'same-origin',
    }).catch(() => {});
  };
  const comeBack = (event) => {
    left = false;
    if (event.persisted && s.online && !s.stopped) setOnline(true);
  };
  on(window, 'beforeunload', leave);
  on(window, 'pagehide', leave);
  on(window, 'pageshow', comeBack);
}
