// A change sent on a stale view of a ticket: the service refused it (412
// `version_conflict`, the changes since the version it was based on), and
// the agent chooses to send it anyway (based on the version now) or to
// reread the ticket first (the draft is kept).

import { h } from '../util.js';

/** The refusal's body when `err` is a version conflict, else null. */
export function staleView(err) {
  return err?.status === 412 && err.code === 'version_conflict' ? err.body : null;
}

/** One change since, in words. */
export function describeChange(change, users = []) {
  const by = change.actor?.name ? ` (${change.actor.name})` : '';
  const name = (id) => users.find((u) => u.id === id)?.name ?? id ?? 'nobody';
  switch (change.type) {
    case 'commented':
      return `New comment${by}`;
    case 'status_changed':
      return `Status ${change.from ?? 'none'} → ${change.to ?? 'none'}${by}`;
    case 'priority_changed':
      return `Priority ${change.from ?? 'none'} → ${change.to ?? 'none'}${by}`;
    case 'assignee_changed':
      return `Assigned to ${name(change.to)}${by}`;
    case 'tags_changed':
      return `Tags changed${by}`;
    case 'custom_fields_changed':
      return `Fields changed${by}`;
    default:
      return `${String(change.type).replaceAll('_', ' ')}${by}`;
  }
}

/**
 * Shows the refusal in `host` with the two ways on. `what` names the held
 * change ("Your reply"); `sendAnyway(version)` sends it based on the version
 * now; `reread()` loads the ticket again. Both close the panel.
 */
export function showConflict(host, conflict, { what, users, sendAnyway, reread }) {
  const changes = conflict.changes ?? [];
  const close = () => {
    host.replaceChildren();
    host.hidden = true;
  };
  const anyway = h(
    'button',
    {
      type: 'button',
      class: 'btn btn-sm',
      id: 'conflict-send',
      onclick: () => {
        close();
        sendAnyway(conflict.currentVersion);
      },
    },
    'Send anyway',
  );
  host.replaceChildren(
    h('p', { class: 'conflict-title' }, `${what} was not sent: the ticket changed since you started.`),
    h('ul', { class: 'conflict-changes' }, ...changes.map((change) => h('li', {}, describeChange(change, users)))),
    h(
      'div',
      { class: 'conflict-actions' },
      anyway,
      h(
        'button',
        {
          type: 'button',
          class: 'btn btn-secondary btn-sm',
          id: 'conflict-reread',
          onclick: () => {
            close();
            reread();
          },
        },
        'Reread',
      ),
    ),
  );
  host.hidden = false;
  anyway.focus();
}
