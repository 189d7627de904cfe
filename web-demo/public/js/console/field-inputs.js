// One custom field's label and input by its definition's type, and the
// value an input holds as the API takes it: shared by the chat's fields and
// the ticket's.

import { h } from '../util.js';

const INPUT_TYPES = { text: 'text', number: 'number', date: 'date', datetime: 'datetime-local' };

/**
 * The label and input of one definition, holding `value`; the input's id is
 * `<prefix>-<key>` and its `data-key` the key.
 */
export function fieldInput(definition, value, prefix = 'cf') {
  const id = `${prefix}-${definition.key}`;
  const label = `${definition.label || definition.key}${definition.required ? ' *' : ''}`;
  const options = Array.isArray(definition.options) ? definition.options : [];
  let input;
  switch (definition.type) {
    case 'boolean':
      input = h('input', { type: 'checkbox', id, dataset: { key: definition.key } });
      input.checked = value === true;
      return h('label', { class: 'check field', dataset: { field: definition.key } }, input, ` ${label}`);
    case 'select':
      input = h(
        'select',
        { class: 'select', id, dataset: { key: definition.key } },
        h('option', { value: '' }, '—'),
        ...options.map((o) => h('option', { value: o }, o)),
      );
      input.value = typeof value === 'string' ? value : '';
      break;
    case 'multiselect': {
      const chosen = Array.isArray(value) ? value : [];
      input = h(
        'select',
        { class: 'select', id, multiple: true, size: Math.min(Math.max(options.length, 2), 6), dataset: { key: definition.key } },
        ...options.map((o) => h('option', { value: o, selected: chosen.includes(o) }, o)),
      );
      break;
    }
    default:
      input = h('input', {
        class: 'input',
        id,
        type: INPUT_TYPES[definition.type] ?? 'text',
        step: definition.type === 'number' ? 'any' : undefined,
        maxlength: definition.type === 'text' ? 1000 : undefined,
        dataset: { key: definition.key },
      });
      input.value = toInput(definition.type, value);
  }
  return h('div', { class: 'field', dataset: { field: definition.key } }, h('label', { class: 'label', for: id }, label), input);
}

/** A stored value as the input shows it. */
function toInput(type, value) {
  if (value === null || value === undefined) return '';
  if (type === 'datetime') {
    const at = new Date(value);
    if (Number.isNaN(at.getTime())) return '';
    // datetime-local wants local time without a zone.
    const local = new Date(at.getTime() - at.getTimezoneOffset() * 60_000);
    return local.toISOString().slice(0, 16);
  }
  return String(value);
}

/** What an input holds, as the API takes it; null clears the field. */
export function fromInput(definition, input) {
  switch (definition.type) {
    case 'boolean':
      return input.checked;
    case 'number':
      return input.value === '' ? null : Number(input.value);
    case 'datetime':
      return input.value === '' ? null : new Date(input.value).toISOString();
    case 'multiselect': {
      const chosen = [...input.selectedOptions].map((o) => o.value);
      return chosen.length ? chosen : null;
    }
    default:
      return input.value === '' ? null : input.value;
  }
}
