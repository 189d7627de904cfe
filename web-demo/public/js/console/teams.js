// The agent's teams (GET /teams, those listing this agent as a member): a
// picker, and the picked team's queue length, kept live from the `queue`
// frames the entity channels carry ({teamId, length}). The console listens
// on the entity channels of every team the agent is in, besides the entity
// it shows, so a team's queue and the chats routed to the agent reach it
// whichever entity they belong to.

import { listOf } from '../api.js';
import { h } from '../util.js';

const TEAM_ITEM = 'sd-agent-team';

/** Sets this part up on the console `c` and adds its functions to it. */
export function setUpTeams(c) {
  const { el, s, me, api, on, storage } = c;
  s.myTeams = new Map(); // team id -> team
  s.teamId = null; // the picked team
  s.queueLength = new Map(); // team id -> chats waiting
  s.entityChannels = new Set(); // entity ids the socket listens on
  Object.assign(c, { loadTeams, onQueue, syncEntityChannels, pickedTeam });

  async function loadTeams() {
    let teams;
    try {
      teams = listOf(await api('/teams'));
    } catch {
      return; // Without teams:read the console works without teams.
    }
    s.myTeams = new Map(teams.filter((team) => (team.memberIds ?? []).includes(me.id)).map((team) => [team.id, team]));
    for (const team of s.myTeams.values()) s.queueLength.set(team.id, team.queueLength ?? 0);
    const saved = storage.getItem(TEAM_ITEM);
    if (!s.myTeams.has(s.teamId)) s.teamId = s.myTeams.has(saved) ? saved : (s.myTeams.keys().next().value ?? null);
    renderTeamPicker();
    syncEntityChannels();
    c.renderTeam();
    c.loadAssigned();
  }

  function pickedTeam() {
    return s.myTeams.get(s.teamId) ?? null;
  }

  /** Listens on the shown entity and on every entity of the agent's teams. */
  function syncEntityChannels() {
    const wanted = new Set([s.entityId]);
    for (const team of s.myTeams.values()) for (const id of team.entityIds ?? []) wanted.add(id);
    for (const id of s.entityChannels) if (!wanted.has(id)) c.socket.unsubscribe(`entity:${id}`);
    for (const id of wanted) if (!s.entityChannels.has(id)) c.socket.subscribe(`entity:${id}`);
    s.entityChannels = wanted;
  }

  /** A team's queue length (the session channel's `position` is not ours). */
  function onQueue(data) {
    if (!data.teamId || typeof data.length !== 'number') return;
    s.queueLength.set(data.teamId, data.length);
    if (data.teamId === s.teamId) renderQueue();
  }

  function renderTeamPicker() {
    el.workloadTeam.hidden = s.myTeams.size === 0;
    el.teamSelect.replaceChildren(...[...s.myTeams.values()].map((team) => h('option', { value: team.id }, team.name)));
    if (s.teamId) el.teamSelect.value = s.teamId;
    renderQueue();
  }

  function renderQueue() {
    const team = pickedTeam();
    if (!team) {
      el.queueLength.textContent = '';
      return;
    }
    const waiting = s.queueLength.get(team.id) ?? 0;
    el.queueLength.dataset.length = String(waiting);
    el.queueLength.classList.toggle('is-waiting', waiting > 0);
    el.queueLength.textContent = waiting === 0 ? 'Nobody waiting' : `${waiting} ${waiting === 1 ? 'chat' : 'chats'} waiting in the queue`;
  }

  on(el.teamSelect, 'change', () => {
    s.teamId = el.teamSelect.value;
    storage.setItem(TEAM_ITEM, s.teamId);
    renderQueue();
    c.renderTeam();
  });
}
