// A WebSocket to /api/v1/ws that stays up: it reconnects with backoff,
// re-subscribes its channels, and asks for the messages it missed with
// `since` (the last message id seen on each session channel), so a dropped
// connection loses nothing. A `message` frame with a `clientMessageId` is
// kept until its `chat.message` reply arrives and sent again after every
// reconnect: the server stores a repeated clientMessageId once, so a
// message whose reply was lost with the connection arrives exactly once.
// Protocol: docs/websocket.md.

const PING_EVERY_MS = 25_000;
const DEAD_AFTER_MS = 70_000;
const MAX_BACKOFF_MS = 15_000;

export class LiveSocket {
  /**
   * @param {object} options
   * @param {() => Promise<string>} options.url  a fresh socket URL per connection
   *   (agent consoles fetch a new short-lived token each time)
   * @param {(frame: object) => void} options.onFrame  every server frame
   * @param {(status: string, detail?: object) => void} [options.onStatus]
   *   'connecting' | 'open' | 'reconnecting' | 'closed'
   */
  constructor({ url, onFrame, onStatus = () => {} }) {
    this.urlFor = url;
    this.onFrame = onFrame;
    this.onStatus = onStatus;
    this.ws = null;
    this.channels = new Set();
    this.cursors = new Map(); // channel -> last message id seen
    this.outbox = []; // frames written while disconnected
    this.unacked = new Map(); // clientMessageId -> message frame, until its reply
    this.attempt = 0;
    this.stopped = true;
    this.status = 'closed';
    this.lastFrameAt = 0;
    this.subscribing = new Set(); // ids of the subscribe frames of this connect, until answered
    this.timers = { reconnect: null, ping: null };
    this.nudge = () => {
      if (!this.stopped && !this.ws && this.status !== 'open' && this.status !== 'connecting') this.connectNow();
    };
  }

  start() {
    if (!this.stopped) return;
    this.stopped = false;
    window.addEventListener('online', this.nudge);
    document.addEventListener('visibilitychange', this.nudge);
    this.connectNow();
  }

  stop() {
    this.stopped = true;
    window.removeEventListener('online', this.nudge);
    document.removeEventListener('visibilitychange', this.nudge);
    clearTimeout(this.timers.reconnect);
    clearInterval(this.timers.ping);
    if (this.ws) {
      this.ws.onclose = null;
      this.ws.close(1000, 'bye');
      this.ws = null;
    }
    this.setStatus('closed');
  }

  get isOpen() {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  /** Subscribes now (if open) and after every reconnect. */
  subscribe(channel, since) {
    this.channels.add(channel);
    if (since) this.noteMessage(channel, since);
    if (this.isOpen) this.sendSubscribe(channel);
  }

  unsubscribe(channel) {
    this.channels.delete(channel);
    this.cursors.delete(channel);
    if (this.isOpen) this.raw({ type: 'unsubscribe', channel });
  }

  /** Records that `messageId` was seen on `channel` (ids are time-ordered). */
  noteMessage(channel, messageId) {
    const current = this.cursors.get(channel);
    if (!current || String(messageId) > String(current)) this.cursors.set(channel, messageId);
  }

  /**
   * Sends a frame. With `queue`, a frame written while disconnected is kept
   * and sent after the next successful (re)subscription; a queued frame with
   * a `clientMessageId` is kept until the server acknowledges it (sent again
   * after each reconnect until then).
   */
  send(frame, { queue = false } = {}) {
    const untilAcked = queue && frame.clientMessageId;
    if (untilAcked) this.unacked.set(frame.clientMessageId, frame);
    if (this.isOpen) {
      this.raw(frame);
      return true;
    }
    if (queue && !untilAcked) this.outbox.push(frame);
    return false;
  }

  // -- internals --

  raw(frame) {
    this.ws.send(JSON.stringify(frame));
  }

  sendSubscribe(channel, id) {
    const frame = { type: 'subscribe', channel };
    if (id) frame.id = id;
    const since = this.cursors.get(channel);
    if (since) frame.since = since;
    this.raw(frame);
  }

  setStatus(status, detail) {
    this.status = status;
    this.onStatus(status, detail);
  }

  async connectNow() {
    clearTimeout(this.timers.reconnect);
    if (this.stopped) return;
    this.setStatus(this.attempt === 0 ? 'connecting' : 'reconnecting', { attempt: this.attempt });
    let url;
    try {
      url = await this.urlFor();
    } catch (err) {
      // The credentials themselves were refused: retrying will not help.
      if (err?.status === 401 || err?.status === 403) {
        this.stopped = true;
        this.setStatus('closed', { error: err });
        return;
      }
      this.scheduleReconnect();
      return;
    }
    if (this.stopped) return;
    const ws = new WebSocket(url);
    this.ws = ws;
    ws.onopen = () => {
      if (this.ws !== ws) return;
      this.attempt = 0;
      this.lastFrameAt = Date.now();
      // 'open' waits for the server's answer to every subscription: a
      // snapshot the page loads on 'open' is then read after the channels
      // hold, and an event between the two is in one or the other.
      this.subscribing.clear();
      let n = 0;
      for (const channel of this.channels) {
        const id = `connect-subscribe:${(n += 1)}`;
        this.subscribing.add(id);
        this.sendSubscribe(channel, id);
      }
      clearInterval(this.timers.ping);
      this.timers.ping = setInterval(() => this.keepAlive(), PING_EVERY_MS);
      if (this.subscribing.size === 0) this.subscribed();
    };
    ws.onmessage = (event) => {
      if (this.ws !== ws) return;
      this.lastFrameAt = Date.now();
      let frame;
      try {
        frame = JSON.parse(event.data);
      } catch {
        return;
      }
      this.settle(frame);
      const opens = this.answersSubscribe(frame);
      if (frame.type === 'chat.message' && frame.data?.id) {
        const sessionChannel = `session:${frame.data.sessionId}`;
        if (this.channels.has(sessionChannel)) this.noteMessage(sessionChannel, frame.data.id);
      }
      this.onFrame(frame);
      if (opens) this.subscribed();
    };
    ws.onclose = (event) => {
      if (this.ws !== ws) return;
      clearInterval(this.timers.ping);
      this.ws = null;
      if (this.stopped) return;
      this.scheduleReconnect(event.code);
    };
    ws.onerror = () => {
      // onclose follows; nothing to do here.
    };
  }

  /** Whether `frame` answers the last subscription of the connect still unanswered. */
  answersSubscribe(frame) {
    if (this.subscribing.size === 0 || (frame.type !== 'subscribed' && frame.type !== 'error')) return false;
    if (!this.subscribing.delete(frame.id)) return false;
    return this.subscribing.size === 0;
  }

  /** Every channel answered (held or refused): open, and send what waited. */
  subscribed() {
    this.setStatus('open');
    const pending = this.outbox.splice(0);
    for (const frame of pending) this.raw(frame);
    for (const frame of this.unacked.values()) this.raw(frame);
  }

  /** A message frame is acknowledged by its reply, or refused by an error. */
  settle(frame) {
    if (frame.type === 'chat.message' && frame.data?.clientMessageId) {
      this.unacked.delete(frame.data.clientMessageId);
    } else if (frame.type === 'error' && frame.id !== undefined) {
      for (const [clientMessageId, sent] of this.unacked) {
        if (sent.id === frame.id) this.unacked.delete(clientMessageId);
      }
    }
  }

  keepAlive() {
    if (!this.isOpen) return;
    if (Date.now() - this.lastFrameAt > DEAD_AFTER_MS) {
      // No pong for too long: the connection is dead without knowing it.
      this.ws.close(4000, 'dead');
      return;
    }
    this.raw({ type: 'ping' });
  }

  scheduleReconnect(code) {
    this.attempt += 1;
    const base = Math.min(MAX_BACKOFF_MS, 500 * 2 ** Math.min(this.attempt - 1, 5));
    const delay = base / 2 + Math.random() * (base / 2);
    this.setStatus('reconnecting', { attempt: this.attempt, code, delay });
    this.timers.reconnect = setTimeout(() => this.connectNow(), delay);
  }
}
