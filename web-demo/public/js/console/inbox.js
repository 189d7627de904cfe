// The Tickets view's inboxes: mine, unassigned, one per team of this agent,
// all, and the saved views (GET /views: the shared ones and this agent's
// own), each with how many tickets it holds. The built-in ones count with
// the list's status filter (GET /tickets?limit=1…, its exact `total`), a
// saved view by its own filters (GET /views/{id}, its `count`); counts are
// read again shortly after any ticket event, so they follow live.

import { listOf } from '../api.js';
import { debounce, h } from '../util.js';

const COUNT_AFTER_MS = 400;

export class Inbox {
  /**
   * @param {object} options
   * @param {(path: string) => Promise<object>} options.api  the console's API call
   * @param {{id: string}} options.me  the signed-in agent
   * @param {HTMLElement} options.host  where the views are listed
   * @param {() => string} options.status  the list's status filter ('' for any)
   * @param {(view: object) => void} options.onPick  a view was chosen
   */
  constructor({ api, me, host, status, onPick }) {
    this.api = api;
    this.me = me;
    this.host = host;
    this.status = status;
    this.onPick = onPick;
    this.views = this.builtIn([]);
    this.current = this.views.find((v) => v.key === 'all');
    this.counts = new Map();
    this.recount = debounce(() => this.countAll(), COUNT_AFTER_MS);
  }

  /** Mine, unassigned, each team's, all: each a query of the ticket list. */
  builtIn(teams) {
    return [
      { key: 'mine', name: 'Mine', query: { assignedToId: this.me.id } },
      { key: 'unassigned', name: 'Unassigned', query: { assigned: 'false' } },
      ...teams.map((team) => ({ key: `team:${team.id}`, name: team.name, query: { teamId: team.id } })),
      { key: 'all', name: 'All', query: {} },
    ];
  }

  /** Reads this agent's teams and the saved views, then counts. */
  async load() {
    const [teams, saved] = await Promise.all([this.api('/teams').then(listOf, () => []), this.api('/views').then(listOf, () => [])]);
    const mine = teams.filter((team) => (team.memberIds ?? []).includes(this.me.id));
    this.views = [
      ...this.builtIn(mine),
      ...saved.map((view) => ({ key: `view:${view.id}`, name: view.name, viewId: view.id, filters: view.filters ?? {} })),
    ];
    this.current = this.views.find((v) => v.key === this.current.key) ?? this.views.find((v) => v.key === 'all');
    this.render();
    await this.countAll();
  }

  async countAll() {
    await Promise.all(this.views.map((view) => this.count(view)));
    this.render();
  }

  async count(view) {
    try {
      if (view.viewId) {
        const read = await this.api(`/views/${encodeURIComponent(view.viewId)}`);
        this.counts.set(view.key, read.count ?? null);
        return;
      }
      const query = new URLSearchParams({ limit: '1', ...view.query });
      if (this.status()) query.set('status', this.status());
      const page = await this.api(`/tickets?${query}`);
      this.counts.set(view.key, page.total ?? null);
    } catch {
      this.counts.delete(view.key);
    }
  }

  pick(key) {
    const view = this.views.find((v) => v.key === key);
    if (!view) return;
    this.current = view;
    this.render();
    this.onPick(view);
  }

  render() {
    this.host.replaceChildren(
      ...this.views.map((view) => {
        const count = this.counts.get(view.key);
        return h(
          'button',
          {
            type: 'button',
            class: `inbox-view${view.viewId ? ' is-saved' : ''}`,
            'aria-pressed': String(view.key === this.current.key),
            dataset: { view: view.key },
            onclick: () => this.pick(view.key),
          },
          h('span', { class: 'inbox-name' }, view.name),
          h('span', { class: 'count', 'aria-label': count === undefined ? null : `${count} tickets` }, count ?? ''),
        );
      }),
    );
  }
}
