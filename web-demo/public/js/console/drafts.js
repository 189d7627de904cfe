// Drafts: what the agent types in a reply is kept in localStorage, per
// agent and per ticket or chat, as it is typed, so an ended session (sign in
// again), a reload or a closed tab loses none of it. A sent reply clears it.

import { safeStorage } from '../util.js';

const PREFIX = 'sd-draft';
const storage = safeStorage('localStorage');

/**
 * The drafts of agent `userId`: `get`, `set` (an empty text removes it) and
 * `clear`, each by `kind` ('ticket' or 'chat') and id.
 */
export function draftsOf(userId) {
  const item = (kind, id) => `${PREFIX}:${userId}:${kind}:${id}`;
  return {
    get: (kind, id) => (id ? (storage.getItem(item(kind, id)) ?? '') : ''),
    set(kind, id, text) {
      if (!id) return;
      if (text.trim()) storage.setItem(item(kind, id), text);
      else storage.removeItem(item(kind, id));
    },
    clear: (kind, id) => id && storage.removeItem(item(kind, id)),
  };
}
