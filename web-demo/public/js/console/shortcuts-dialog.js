// The list of keyboard shortcuts under `?` (and its button in the top bar),
// drawn from the table the key handlers use (keys.js): every shortcut, by
// where it works.

import { h, placed } from '../util.js';
import { SHORTCUTS, keyNames } from './keys.js';
import { Modal } from './modal.js';

/** One way to press a shortcut: its keys as <kbd>, each with its spoken name. */
function keysOf(spec) {
  return keyNames(spec).flatMap(([shown, spoken], index) => [
    index > 0 ? '+' : null,
    h('kbd', {}, h('span', { 'aria-hidden': 'true' }, shown), h('span', { class: 'sr-only' }, spoken)),
  ]);
}

export class ShortcutsDialog {
  constructor() {
    const groups = new Map();
    for (const entry of SHORTCUTS) {
      if (!groups.has(entry.where)) groups.set(entry.where, []);
      groups.get(entry.where).push(entry);
    }
    this.closer = h('button', { type: 'button', class: 'btn btn-ghost btn-sm', id: 'shortcuts-close' }, 'Close');
    const sections = [...groups].map(([where, entries], index) =>
      h(
        'section',
        { class: 'shortcut-group', 'aria-labelledby': `shortcuts-where-${index}` },
        h('h3', { class: 'side-title', id: `shortcuts-where-${index}` }, where),
        h(
          'dl',
          { class: 'shortcut-list' },
          entries.flatMap((entry) => [
            h(
              'dt',
              { class: 'shortcut-keys', dataset: { shortcut: entry.id } },
              entry.keys.flatMap((spec, at) => [at > 0 ? h('span', { class: 'shortcut-or' }, ' or ') : null, ...keysOf(spec)]),
            ),
            h('dd', { class: 'shortcut-does', dataset: { shortcut: entry.id } }, entry.does),
          ]),
        ),
      ),
    );
    const dialog = h(
      'dialog',
      { class: 'dialog shortcuts-dialog', id: 'shortcuts-dialog', 'aria-labelledby': 'shortcuts-title' },
      h('div', { class: 'dialog-head' }, h('h2', { id: 'shortcuts-title' }, 'Keyboard shortcuts'), this.closer),
      h('div', { class: 'shortcut-groups', tabindex: '0', role: 'region', 'aria-label': 'Shortcuts' }, sections),
    );
    this.modal = new Modal(placed(dialog, (node) => document.body.append(node)));
    this.closer.addEventListener('click', () => this.modal.close());
  }

  open() {
    this.modal.open(this.closer);
  }
}
