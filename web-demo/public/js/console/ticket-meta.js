// The open ticket's tags and custom fields, edited in place: a tag is added
// from its input (Enter) or removed by its button, a field saved when its
// input changes. Each edit goes through the ticket page's change (PATCH
// /tickets/{id} with the version shown, so one made on a stale view is
// stopped like any other change): `tags` replaces the set, `customFields`
// merges the one key. Fields are the company's definitions that apply to
// tickets (GET /settings/custom-fields); without them (none, or no right to
// read settings) only the tags show.

import { listOf } from '../api.js';
import { h } from '../util.js';
import { fieldInput, fromInput } from './field-inputs.js';
import { matches } from './keys.js';

const normalize = (raw) => raw.trim().toLowerCase();

export class TicketMeta {
  /**
   * @param {object} options
   * @param {(path: string) => Promise<object>} options.api  the console's API call
   * @param {HTMLElement} options.host  where the tags and fields go
   * @param {(body: object) => Promise<void>} options.save  the page's change
   */
  constructor({ api, host, save }) {
    this.api = api;
    this.save = save;
    this.host = host;
    this.definitions = null;
    this.ticket = null;
    this.tags = h('ul', { class: 'tm-tags', id: 'tm-tags', 'aria-label': 'Tags' });
    this.tagInput = h('input', {
      class: 'input input-compact',
      id: 'tm-tag-input',
      placeholder: 'Add a tag',
      maxlength: 50,
      autocomplete: 'off',
      spellcheck: 'false',
      onkeydown: (event) => {
        if (!matches('tag-add', event)) return;
        event.preventDefault();
        this.addTag(this.tagInput.value);
      },
    });
    this.fields = h('div', { class: 'tm-fields', id: 'tm-fields' });
    host.replaceChildren(
      h('h3', { class: 'side-title' }, 'Tags'),
      this.tags,
      h('label', { class: 'sr-only', for: 'tm-tag-input' }, 'Add a tag'),
      this.tagInput,
      this.fields,
    );
  }

  /** Shows `ticket`'s tags and fields (the definitions read once). */
  async show(ticket) {
    const other = this.ticket?.id !== ticket.id;
    this.ticket = ticket;
    if (other) this.tagInput.value = '';
    this.renderTags();
    if (this.definitions === null) {
      try {
        const all = listOf(await this.api('/settings/custom-fields'));
        this.definitions = all.filter((d) => Array.isArray(d.appliesTo) && d.appliesTo.includes('ticket'));
      } catch {
        this.definitions = [];
      }
    }
    if (this.ticket?.id === ticket.id) this.renderFields();
  }

  renderTags() {
    const tags = this.ticket?.tags ?? [];
    this.tags.replaceChildren(
      ...tags.map((tag) =>
        h(
          'li',
          { class: 'tag', dataset: { tag } },
          tag,
          h('button', { type: 'button', class: 'tag-remove', 'aria-label': `Remove tag ${tag}`, onclick: () => this.removeTag(tag) }, '×'),
        ),
      ),
    );
  }

  renderFields() {
    const values = this.ticket?.customFields ?? {};
    this.fields.replaceChildren(
      ...this.definitions.map((definition) => {
        const node = fieldInput(definition, values[definition.key], 'tm-cf');
        const input = node.querySelector('[data-key]') ?? node;
        input.addEventListener('change', () => this.save({ customFields: { [definition.key]: fromInput(definition, input) } }));
        return node;
      }),
    );
  }

  async addTag(raw) {
    const tag = normalize(raw);
    const tags = this.ticket?.tags ?? [];
    if (!tag || tags.includes(tag)) return;
    this.tagInput.value = '';
    await this.save({ tags: [...tags, tag] });
  }

  async removeTag(tag) {
    const tags = this.ticket?.tags ?? [];
    await this.save({ tags: tags.filter((t) => t !== tag) });
  }
}
