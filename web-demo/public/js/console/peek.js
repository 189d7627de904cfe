// A contact or a knowledge-base article opened from search: the console has
// no page of its own for either, so they open in a dialog. A contact shows
// who they are and their newest tickets and chats (GET /contacts/{id}), each
// of which opens; an article shows its text (GET /kb/articles/{id}).

import { renderMarkdown } from '../markdown.js';
import { h, placed, shortTime, toast } from '../util.js';
import { Modal } from './modal.js';

/** Records listed per kind in a contact's dialog. */
const LISTED = 10;

export class Peek {
  /**
   * @param {object} options
   * @param {(path: string, options?: object) => Promise<object>} options.api  the console's API call
   * @param {(id: string) => void} options.openTicket
   * @param {(id: string) => void} options.openChat
   */
  constructor({ api, openTicket, openChat }) {
    this.api = api;
    this.openTicket = openTicket;
    this.openChat = openChat;
    this.title = h('h2', { id: 'peek-title' });
    this.sub = h('p', { class: 'hint', id: 'peek-sub' });
    this.body = h('div', { class: 'peek-body', id: 'peek-body' });
    this.closer = h('button', { type: 'button', class: 'btn btn-ghost btn-sm', id: 'peek-close' }, 'Close');
    const dialog = h(
      'dialog',
      { class: 'dialog peek-dialog', id: 'peek-dialog', 'aria-labelledby': 'peek-title' },
      h('div', { class: 'dialog-head' }, this.title, this.closer),
      this.sub,
      this.body,
    );
    this.modal = new Modal(placed(dialog, (node) => document.body.append(node)));
    this.closer.addEventListener('click', () => this.modal.close());
    this.generation = 0;
  }

  /** Opens the dialog on `title` at once; `fill` draws the rest when it has it. */
  async show(kind, title, load, fill, returnTo) {
    const generation = ++this.generation;
    this.modal.dialog.dataset.kind = kind;
    this.title.textContent = title;
    this.sub.textContent = 'Loading…';
    this.body.replaceChildren();
    this.modal.open(this.closer, returnTo);
    try {
      const record = await load();
      if (generation === this.generation) fill(record);
    } catch (err) {
      if (generation !== this.generation) return;
      this.sub.textContent = '';
      toast(`Could not open it: ${err.message}`, { error: true });
    }
  }

  showContact(hit, returnTo) {
    const load = () => this.api(`/contacts/${encodeURIComponent(hit.id)}`);
    this.show('contact', hit.name || hit.emails?.[0] || 'Contact', load, (contact) => this.fillContact(contact), returnTo);
  }

  showArticle(hit, returnTo) {
    const load = () => this.api(`/kb/articles/${encodeURIComponent(hit.id)}`);
    this.show('article', hit.title, load, (article) => this.fillArticle(article), returnTo);
  }

  fillContact(contact) {
    this.sub.textContent = [...(contact.emails ?? []), contact.phone].filter(Boolean).join(' · ');
    const open = (go, id) => () => {
      this.modal.handOver();
      this.modal.close();
      go(id);
    };
    const list = (title, id, rows) =>
      h(
        'section',
        { class: 'peek-section', 'aria-labelledby': id },
        h('h3', { class: 'side-title', id }, title),
        rows.length > 0 ? h('ul', { class: 'peek-list' }, rows.slice(0, LISTED)) : h('p', { class: 'side-empty' }, 'None.'),
      );
    const tickets = (contact.tickets ?? []).map((ticket) =>
      h(
        'li',
        {},
        h(
          'button',
          { type: 'button', class: 'peek-item', dataset: { kind: 'ticket', id: ticket.id }, onclick: open(this.openTicket, ticket.id) },
          `${ticket.ticketNumber} ${ticket.subject}`,
          h('span', { class: 'search-detail' }, `${ticket.status.replace('_', ' ').toLowerCase()} · ${shortTime(ticket.createdAt)}`),
        ),
      ),
    );
    const chats = (contact.chats ?? []).map((chat) =>
      h(
        'li',
        {},
        h(
          'button',
          { type: 'button', class: 'peek-item', dataset: { kind: 'chat', id: chat.id }, onclick: open(this.openChat, chat.id) },
          chat.visitorName || 'Visitor',
          h('span', { class: 'search-detail' }, `${chat.status.toLowerCase()} · ${shortTime(chat.createdAt)}`),
        ),
      ),
    );
    this.body.replaceChildren(
      contact.notes ? h('p', { class: 'peek-notes' }, contact.notes) : '',
      list('Tickets', 'peek-tickets', tickets),
      list('Chats', 'peek-chats', chats),
    );
  }

  fillArticle(article) {
    this.sub.textContent = article.isPublished === false ? 'Draft' : `Updated ${shortTime(article.updatedAt)}`;
    const text = h('div', { class: 'peek-article', id: 'peek-article' });
    renderMarkdown(text, article.content ?? '');
    this.body.replaceChildren(text);
  }
}
