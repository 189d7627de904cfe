// Who of the team is online: polled from /widget/v1/presence, or live from
// the socket's presence frames while a chat is open.

import { request } from '../api.js';
import { h, initials } from '../util.js';
import { el } from './dom.js';
import { showMissing } from './panel.js';
import { state, config } from './state.js';

export async function refreshPresence() {
  if (!config.widgetKey) {
    renderPresence(null);
    return;
  }
  try {
    const presence = await request(`/widget/v1/presence?widgetKey=${encodeURIComponent(config.widgetKey)}`);
    state.keyValid = true;
    renderPresence(presence);
  } catch (err) {
    if (err.status === 404 || err.status === 401) {
      state.keyValid = false;
      renderPresence(null);
      showMissing('This widget key is not valid', 'Check the widget key in the page address, or open the widget from the agent console.');
    }
    // Network trouble or rate limiting: keep what we showed, try again later.
  }
}

export function renderPresence(presence) {
  state.presence = presence;
  const agents = presence?.agents ?? [];
  const online = Boolean(presence?.online);
  el.presence.dataset.online = String(online);
  el.presenceDot.classList.toggle('dot-ok', online);
  el.launcherDot.classList.toggle('is-online', online);
  el.avatars.replaceChildren(...agents.slice(0, 3).map((agent) => h('span', { class: 'avatar', title: agent.name }, initials(agent.name))));
  let text;
  if (!presence) {
    text = state.conversation ? 'Continue your conversation' : 'Support chat';
  } else if (online) {
    const names = agents.map((a) => a.name);
    let who;
    if (names.length === 0) who = 'The team is';
    else if (names.length === 1) who = `${names[0]} is`;
    else if (names.length === 2) who = `${names[0]} and ${names[1]} are`;
    else who = `${names[0]}, ${names[1]} and ${names.length - 2} more are`;
    text = `${who} online · we reply in a few minutes`;
  } else {
    text = 'We are away · leave a message and we will reply soon';
  }
  el.presenceText.textContent = text;
}

/** Polls presence while the socket does not bring it live. */
export function schedulePresence() {
  clearTimeout(state.presenceTimer);
  if (!state.keyValid) return; // an unknown key stays unknown: stop asking
  state.presenceTimer = setTimeout(async () => {
    if (document.visibilityState === 'visible' && !state.live) await refreshPresence();
    schedulePresence();
  }, config.pollMs);
}

export function renderLivePresence() {
  if (!state.live) return;
  const agents = [...state.live.values()].sort().map((name) => ({ name }));
  renderPresence({ online: agents.length > 0, agents });
}

export function wirePresence() {
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') refreshPresence();
  });
}
