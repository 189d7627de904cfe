// Collision on the open ticket: this agent's socket says it views the ticket
// (again every 10 s, and after a reconnect), types on it (at most every 2 s
// while writing) and leaves it; the ticket's channel says who else does, and
// the bar under the ticket's title shows them. Protocol: docs/websocket.md,
// "Collision on tickets".

import { h } from '../util.js';

const REFRESH_MS = 10_000;
const TYPING_EVERY_MS = 2_000;

export class TicketWatch {
  /**
   * @param {object} options
   * @param {import('../socket.js').LiveSocket} options.socket  the console's socket
   * @param {string} options.ticketId
   * @param {string} options.myId  this agent's user id (their own events are ignored)
   * @param {HTMLElement} options.bar  where the others are shown
   */
  constructor({ socket, ticketId, myId, bar }) {
    this.socket = socket;
    this.ticketId = ticketId;
    this.myId = myId;
    this.bar = bar;
    this.channel = `ticket:${ticketId}`;
    this.others = new Map(); // user id -> {name, typing}
    this.lastTyping = 0;
    this.timer = null;
  }

  start() {
    this.socket.subscribe(this.channel);
    this.say('viewing');
    this.timer = setInterval(() => this.say('viewing'), REFRESH_MS);
    this.render();
  }

  /** The socket is open again: the server forgot this socket's view. */
  reconnected() {
    this.others.clear();
    this.render();
    this.say('viewing');
  }

  /** The agent typed in the composer. */
  typed() {
    const now = Date.now();
    if (now - this.lastTyping < TYPING_EVERY_MS) return;
    this.lastTyping = now;
    this.say('typing');
  }

  stop() {
    clearInterval(this.timer);
    this.say('leave');
    this.socket.unsubscribe(this.channel);
    this.others.clear();
    this.bar.replaceChildren();
    this.bar.hidden = true;
  }

  /** A `viewing` event of the ticket's channel. */
  onViewing(data) {
    if (data?.ticketId !== this.ticketId || data.userId === this.myId) return;
    if (data.viewing) this.others.set(data.userId, { name: data.name, typing: Boolean(data.typing) });
    else this.others.delete(data.userId);
    this.render();
  }

  say(type) {
    // A console signed out stops its socket: nothing more to say.
    if (this.socket.stopped) {
      clearInterval(this.timer);
      return;
    }
    this.socket.send({ type, ticketId: this.ticketId });
  }

  render() {
    const people = [...this.others.entries()].sort(([, a], [, b]) => a.name.localeCompare(b.name));
    this.bar.hidden = people.length === 0;
    this.bar.replaceChildren(
      ...people.map(([userId, who]) =>
        h(
          'span',
          { class: `watcher${who.typing ? ' is-typing' : ''}`, dataset: { userId, state: who.typing ? 'typing' : 'viewing' } },
          who.typing ? `${who.name} is typing a reply…` : `${who.name} is viewing`,
        ),
      ),
    );
  }
}
