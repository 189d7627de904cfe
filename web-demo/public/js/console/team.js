// Team presence: who of the team is online (with a team picked, its
// members; else every agent of the company).

import { listOf } from '../api.js';
import { h, initials } from '../util.js';

/** Sets this part up on the console `c` and adds its functions to it. */
export function setUpTeam(c) {
  const { el, s, me, api } = c;
  Object.assign(c, { loadTeam, onPresence, renderTeam });

  async function loadTeam() {
    try {
      const agents = listOf(await api('/chat/agent-presence'));
      s.team.clear();
      for (const agent of agents) if (agent.online !== false) s.team.set(agent.userId, agent);
      renderTeam();
    } catch {
      // Shown from the live events instead.
    }
  }

  function onPresence(data) {
    if (data.online) {
      s.team.set(data.userId, { ...s.team.get(data.userId), ...data });
    } else {
      s.team.delete(data.userId);
    }
    renderTeam();
  }

  function renderTeam() {
    const team = c.pickedTeam?.();
    const inTeam = (agent) => !team || agent.userId === me.id || (team.memberIds ?? []).includes(agent.userId);
    const members = [...s.team.values()].filter(inTeam).sort((a, b) => {
      if (a.userId === me.id) return -1;
      if (b.userId === me.id) return 1;
      return String(a.name).localeCompare(String(b.name));
    });
    el.team.replaceChildren(
      ...members.map((agent) =>
        h(
          'li',
          { class: 'team-member', dataset: { userId: agent.userId } },
          h('span', { class: 'avatar avatar-sm', 'aria-hidden': 'true' }, initials(agent.name)),
          h(
            'span',
            { class: 'team-text' },
            h('span', { class: 'team-name' }, agent.name),
            h(
              'span',
              { class: 'team-meta' },
              [
                agent.userId === me.id ? 'You' : null,
                agent.visibility === 'PRIVATE' ? 'Private' : 'Public',
                agent.role === 'ADMIN' ? 'Admin' : 'Agent',
              ]
                .filter(Boolean)
                .join(' · '),
            ),
          ),
          agent.visibility === 'PRIVATE' ? h('span', { class: 'badge' }, 'Hidden') : null,
        ),
      ),
    );
    el.teamEmpty.hidden = members.some((m) => m.userId !== me.id);
    el.countOnline.textContent = members.length ? String(members.length) : '';
  }
}
