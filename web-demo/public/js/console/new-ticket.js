// Creating a ticket from the Tickets view, on behalf of a customer: subject,
// the customer's email (they get the ticket's updates), entity, priority,
// tags and description, sent as POST /tickets; the new ticket then opens.

import { h, placed } from '../util.js';

const PRIORITIES = ['LOW', 'MEDIUM', 'HIGH', 'URGENT'];

/** A labelled field of the form. */
function field(id, label, input) {
  return h('div', { class: 'field' }, h('label', { class: 'label', for: id }, label), input);
}

export class NewTicket {
  /**
   * @param {object} options
   * @param {(path: string, options?: object) => Promise<object>} options.api  the console's API call
   * @param {{id: string, name: string}[]} options.entities  where a ticket may go
   * @param {HTMLElement} options.opener  the button the dialog is opened from
   * @param {(ticket: object) => void} options.onCreated
   */
  constructor({ api, entities, opener, onCreated }) {
    this.api = api;
    this.onCreated = onCreated;
    this.subject = h('input', { class: 'input', id: 'nt-subject', maxlength: 255, required: true });
    this.email = h('input', { class: 'input', id: 'nt-email', type: 'email', maxlength: 255, autocomplete: 'off' });
    this.entity = h('select', { class: 'select', id: 'nt-entity' }, ...entities.map((e) => h('option', { value: e.id }, e.name)));
    this.priority = h(
      'select',
      { class: 'select', id: 'nt-priority' },
      ...PRIORITIES.map((p) => h('option', { value: p, selected: p === 'MEDIUM' }, p[0] + p.slice(1).toLowerCase())),
    );
    this.tags = h('input', { class: 'input', id: 'nt-tags', maxlength: 500, placeholder: 'billing, vip', autocomplete: 'off' });
    this.description = h('textarea', { class: 'textarea', id: 'nt-description', rows: 6, maxlength: 50000 });
    this.error = h('p', { class: 'form-error', id: 'nt-error', role: 'alert', hidden: true });
    this.submit = h('button', { type: 'submit', class: 'btn', id: 'nt-submit' }, 'Create ticket');
    const form = h(
      'form',
      { id: 'nt-form', novalidate: true, onsubmit: (event) => this.create(event) },
      h('h2', { id: 'nt-title' }, 'New ticket'),
      field('nt-subject', 'Subject', this.subject),
      field('nt-email', "Customer's email (gets the ticket's updates)", this.email),
      field('nt-entity', 'Entity', this.entity),
      field('nt-priority', 'Priority', this.priority),
      field('nt-tags', 'Tags (comma separated)', this.tags),
      field('nt-description', 'Description', this.description),
      this.error,
      h(
        'div',
        { class: 'dialog-actions' },
        h('button', { type: 'button', class: 'btn btn-ghost', id: 'nt-cancel', onclick: () => this.dialog.close() }, 'Cancel'),
        this.submit,
      ),
    );
    this.dialog = placed(h('dialog', { class: 'dialog', id: 'new-ticket-dialog', 'aria-labelledby': 'nt-title' }, form), (node) =>
      document.body.append(node),
    );
    opener.addEventListener('click', () => this.open());
  }

  open() {
    for (const input of [this.subject, this.email, this.tags, this.description]) input.value = '';
    this.priority.value = 'MEDIUM';
    this.error.hidden = true;
    this.dialog.showModal();
    this.subject.focus();
  }

  async create(event) {
    event.preventDefault();
    const subject = this.subject.value.trim();
    if (!subject) return this.fail('A subject is required.');
    const body = { subject, entityId: this.entity.value, priority: this.priority.value };
    const email = this.email.value.trim();
    if (email) body.visitorEmail = email;
    const description = this.description.value.trim();
    if (description) body.description = description;
    const tags = this.tags.value
      .split(',')
      .map((tag) => tag.trim())
      .filter(Boolean);
    if (tags.length) body.tags = tags;
    this.submit.disabled = true;
    try {
      const ticket = await this.api('/tickets', { method: 'POST', body });
      this.dialog.close();
      this.onCreated(ticket);
    } catch (err) {
      const details = (err.details ?? []).map((d) => `${d.field}: ${d.message}`);
      this.fail([err.message, ...details].join(' · '));
    } finally {
      this.submit.disabled = false;
    }
  }

  fail(message) {
    this.error.textContent = message;
    this.error.hidden = false;
  }
}
