// Global search: a dialog opened with `/` (or its button in the top bar)
// that searches tickets, chats, contacts and knowledge-base articles as the
// agent types (the four API searches at once, search-kinds.js), shows the
// hits grouped by kind, moves through them with the arrow keys, opens one
// with Enter (or a click) and closes with Escape. The input is a combobox:
// focus stays in it while the arrows move the active result.

import { listOf } from '../api.js';
import { debounce, h, placed } from '../util.js';
import { keyNames, matches, shortcut } from './keys.js';
import { Modal } from './modal.js';
import { KINDS } from './search-kinds.js';

/** How long typing pauses before the searches go. */
const TYPING_PAUSE_MS = 200;

/** The shortcuts of the dialog's own hint line, as the key table has them. */
function hint(...ids) {
  return ids.flatMap((id, at) => [
    at > 0 ? ' · ' : null,
    ...keyNames(shortcut(id).keys[0]).map(([shown, spoken]) => h('kbd', { 'aria-label': spoken }, shown)),
    ` ${shortcut(id).does.toLowerCase()}`,
  ]);
}

export class Search {
  /**
   * @param {object} options
   * @param {(path: string, options?: object) => Promise<object>} options.api  the console's API call
   * @param {(kind: string, hit: object, returnTo: HTMLElement | null) => void} options.onOpen  opens a hit
   */
  constructor({ api, onOpen }) {
    this.api = api;
    this.onOpen = onOpen;
    this.hits = []; // [{kind, hit, node}] in the order shown
    this.active = -1;
    this.generation = 0;
    this.inFlight = null;
    this.input = h('input', {
      class: 'input search-input',
      id: 'search-input',
      type: 'text',
      role: 'combobox',
      'aria-autocomplete': 'list',
      'aria-expanded': 'false',
      'aria-controls': 'search-results',
      autocomplete: 'off',
      spellcheck: 'false',
      maxlength: 500,
      placeholder: 'Search tickets, chats, contacts, articles…',
    });
    this.status = h('p', { class: 'search-status', id: 'search-status', role: 'status', 'aria-live': 'polite' }, 'Type to search.');
    this.results = h('div', { class: 'search-results', id: 'search-results', role: 'listbox', 'aria-label': 'Search results' });
    this.errors = h('ul', { class: 'search-errors', id: 'search-errors', hidden: true });
    const closer = h('button', { type: 'button', class: 'btn btn-ghost btn-sm', id: 'search-close' }, 'Close');
    const dialog = h(
      'dialog',
      { class: 'dialog search-dialog', id: 'search-dialog', 'aria-labelledby': 'search-title' },
      h('h2', { class: 'sr-only', id: 'search-title' }, 'Search'),
      h(
        'div',
        { class: 'search-bar' },
        h('label', { class: 'sr-only', for: 'search-input' }, 'Search tickets, chats, contacts and articles'),
        this.input,
        closer,
      ),
      this.status,
      this.results,
      this.errors,
      h('p', { class: 'hint search-hint' }, hint('search-next', 'search-previous', 'search-open', 'dialog-close')),
    );
    this.modal = new Modal(placed(dialog, (node) => document.body.append(node)));
    closer.addEventListener('click', () => this.modal.close());
    const typed = debounce(() => this.run(), TYPING_PAUSE_MS);
    this.input.addEventListener('input', typed);
    this.input.addEventListener('keydown', (event) => this.onKey(event));
  }

  /** Opens the dialog with the last search selected (type over it, or go on). */
  open() {
    this.modal.open(this.input);
    this.input.select();
  }

  onKey(event) {
    if (matches('search-next', event)) this.move(1);
    else if (matches('search-previous', event)) this.move(-1);
    else if (matches('search-open', event)) this.choose(this.active);
    else return;
    event.preventDefault();
  }

  /** Runs the four searches for the text typed; only the latest one shows. */
  async run() {
    const q = this.input.value.trim();
    const generation = ++this.generation;
    this.inFlight?.abort();
    this.inFlight = null;
    if (!q) {
      this.show([]);
      this.status.textContent = 'Type to search.';
      return;
    }
    const controller = new AbortController();
    this.inFlight = controller;
    this.results.setAttribute('aria-busy', 'true');
    this.status.textContent = 'Searching…';
    const answers = await Promise.allSettled(KINDS.map(({ path }) => this.api(path(q), { signal: controller.signal })));
    if (generation !== this.generation) return;
    this.inFlight = null;
    this.results.removeAttribute('aria-busy');
    const groups = KINDS.map((kind, at) => {
      const answer = answers[at];
      return answer.status === 'fulfilled'
        ? { ...kind, hits: listOf(answer.value) }
        : { ...kind, hits: [], error: answer.reason?.message ?? 'failed' };
    });
    this.show(groups);
    const found = groups
      .filter((g) => g.hits.length > 0)
      .map((g) => `${g.hits.length} ${g.counted[g.hits.length === 1 ? 0 : 1]}`)
      .join(', ');
    this.status.textContent = this.hits.length > 0 ? `Found ${found}.` : `Nothing matches “${q}”.`;
  }

  /** Draws the groups (a kind with no hit is left out) and what failed. */
  show(groups) {
    const failed = groups.filter((g) => g.error);
    this.errors.replaceChildren(...failed.map((g) => h('li', {}, `Could not search ${g.title.toLowerCase()}: ${g.error}`)));
    this.errors.hidden = failed.length === 0;
    this.hits = [];
    const nodes = [];
    for (const group of groups) {
      if (group.hits.length === 0) continue;
      const titleId = `search-group-${group.kind}`;
      const options = group.hits.map((hit) => this.option(group, hit));
      nodes.push(
        h(
          'div',
          { class: 'search-group', role: 'group', 'aria-labelledby': titleId, dataset: { kind: group.kind } },
          h('div', { class: 'search-group-title', id: titleId, role: 'presentation' }, group.title),
          options,
        ),
      );
    }
    this.results.replaceChildren(...nodes);
    this.input.setAttribute('aria-expanded', String(this.hits.length > 0));
    this.select(this.hits.length > 0 ? 0 : -1);
  }

  option(group, hit) {
    const index = this.hits.length;
    const { label, detail } = group.describe(hit);
    const node = h(
      'div',
      {
        class: 'search-option',
        id: `search-option-${index}`,
        role: 'option',
        'aria-selected': 'false',
        dataset: { kind: group.kind, id: hit.id },
        // The input keeps the focus (and the typing) when a hit is clicked.
        onmousedown: (event) => event.preventDefault(),
        onclick: () => this.choose(index),
      },
      h('span', { class: 'search-label' }, label),
      detail ? h('span', { class: 'search-detail' }, detail) : null,
    );
    this.hits.push({ kind: group.kind, hit, node });
    return node;
  }

  move(by) {
    if (this.hits.length === 0) return;
    this.select(Math.max(0, Math.min(this.hits.length - 1, this.active + by)));
  }

  select(index) {
    this.hits[this.active]?.node.setAttribute('aria-selected', 'false');
    this.active = index;
    const chosen = this.hits[index];
    if (!chosen) {
      this.input.removeAttribute('aria-activedescendant');
      return;
    }
    chosen.node.setAttribute('aria-selected', 'true');
    this.input.setAttribute('aria-activedescendant', chosen.node.id);
    chosen.node.scrollIntoView({ block: 'nearest' });
  }

  /** Opens hit `index`: the dialog closes and the hit takes the focus. */
  choose(index) {
    const chosen = this.hits[index];
    if (!chosen) return;
    const returnTo = this.modal.handOver();
    this.modal.close();
    this.onOpen(chosen.kind, chosen.hit, returnTo);
  }
}
