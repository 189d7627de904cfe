// The console's keyboard shortcuts: one table (SHORTCUTS) that both the key
// handlers and the list under `?` (shortcuts-dialog.js) read, so what the
// list says is what the keys do. A page-wide shortcut is bound to its action
// with `KeyHandler.bind`; one that belongs to a field (Enter in the chat
// reply, Ctrl+Enter in a comment) is tested there with `matches`.

/**
 * Every shortcut: `id` (what code refers to it by), `keys` (any of them
 * works: a character such as `/`, or a key name with modifiers such as
 * `Ctrl+Enter`), `where` (the list's heading) and `does` (its line).
 */
export const SHORTCUTS = Object.freeze([
  { id: 'search', keys: ['/'], where: 'Anywhere', does: 'Search tickets, chats, contacts and articles' },
  { id: 'shortcuts', keys: ['?'], where: 'Anywhere', does: 'Show these keyboard shortcuts' },
  { id: 'ticket-next', keys: ['j'], where: 'Tickets', does: 'Select the next ticket' },
  { id: 'ticket-previous', keys: ['k'], where: 'Tickets', does: 'Select the previous ticket' },
  { id: 'ticket-open', keys: ['Enter'], where: 'Tickets', does: 'Open the selected ticket' },
  { id: 'ticket-reply', keys: ['r'], where: 'Tickets', does: 'Write a comment on the open ticket' },
  { id: 'comment-send', keys: ['Ctrl+Enter', 'Meta+Enter'], where: 'Writing a comment', does: 'Send the comment' },
  { id: 'chat-send', keys: ['Enter'], where: 'Writing a chat reply', does: 'Send the reply' },
  { id: 'chat-newline', keys: ['Shift+Enter'], where: 'Writing a chat reply', does: 'Start a new line' },
  { id: 'tag-add', keys: ['Enter'], where: 'Adding a tag to a ticket', does: 'Add the tag' },
  { id: 'search-next', keys: ['ArrowDown'], where: 'Search', does: 'Next result' },
  { id: 'search-previous', keys: ['ArrowUp'], where: 'Search', does: 'Previous result' },
  { id: 'search-open', keys: ['Enter'], where: 'Search', does: 'Open the result' },
  { id: 'dialog-close', keys: ['Escape'], where: 'Search and dialogs', does: 'Close' },
]);

const BY_ID = new Map(SHORTCUTS.map((shortcut) => [shortcut.id, shortcut]));
const MODIFIERS = ['Ctrl', 'Alt', 'Shift', 'Meta'];

/** The shortcut `id` of the table (an unknown id is a mistake in the code). */
export function shortcut(id) {
  const found = BY_ID.get(id);
  if (!found) throw new Error(`no keyboard shortcut "${id}" in SHORTCUTS`);
  return found;
}

/** `Ctrl+Enter` as its key and the modifiers it needs. */
function parse(spec) {
  const parts = spec.split('+');
  // `+` alone, or a combination ending in `+`, names the plus key.
  const key = spec.endsWith('+') ? '+' : parts.pop();
  const held = new Set(parts.filter((part) => MODIFIERS.includes(part)));
  return { key, held };
}

/**
 * Whether `event` is `spec`. A character is matched as typed, whatever Shift
 * took to type it (`?` is Shift+/ on some layouts, not on others); a named key
 * (Enter, ArrowDown) needs exactly the modifiers the spec names.
 */
function isKey(event, spec) {
  const { key, held } = parse(spec);
  if (event.key !== key) return false;
  const pressed = { Ctrl: event.ctrlKey, Alt: event.altKey, Shift: event.shiftKey, Meta: event.metaKey };
  const character = key.length === 1;
  return MODIFIERS.every((modifier) => (character && modifier === 'Shift') || pressed[modifier] === held.has(modifier));
}

/** Whether `event` is one of the keys of shortcut `id`. */
export function matches(id, event) {
  return !event.isComposing && shortcut(id).keys.some((spec) => isKey(event, spec));
}

/** Where typing is typing, not a shortcut. */
function isTyping(target) {
  return Boolean(target?.closest?.('input, textarea, select, [contenteditable=""], [contenteditable="true"], dialog'));
}

/**
 * The page-wide shortcuts: one keydown listener on the document that finds
 * the shortcut bound for the key pressed (outside fields and dialogs) and
 * runs it. An action that answers `false` did not apply (the key goes on as
 * if unbound).
 */
export class KeyHandler {
  /** @param {AbortSignal} signal  ends the listener (the console's lifetime) */
  constructor(signal) {
    this.bound = [];
    document.addEventListener('keydown', (event) => this.handle(event), { signal });
  }

  /**
   * Runs `run(event)` on shortcut `id`'s keys while `when()` holds.
   * @param {string} id
   * @param {(event: KeyboardEvent) => boolean | void} run
   * @param {{ when?: () => boolean }} [options]
   */
  bind(id, run, { when = () => true } = {}) {
    shortcut(id);
    this.bound.push({ id, run, when });
  }

  handle(event) {
    if (event.defaultPrevented || isTyping(event.target)) return;
    for (const { id, run, when } of this.bound) {
      if (!matches(id, event) || !when()) continue;
      if (run(event) === false) continue;
      event.preventDefault();
      return;
    }
  }
}

/** How a key spec reads in the list: its keys, each with a spoken name. */
const NAMES = {
  ArrowDown: ['↓', 'Down arrow'],
  ArrowUp: ['↑', 'Up arrow'],
  Escape: ['Esc', 'Escape'],
  Meta: ['⌘', 'Command'],
};

/** The keys of `spec` as [shown, spoken] pairs: `Ctrl+Enter` → Ctrl, Enter. */
export function keyNames(spec) {
  const { key, held } = parse(spec);
  return [...MODIFIERS.filter((modifier) => held.has(modifier)), key].map((name) => NAMES[name] ?? [name, name]);
}
