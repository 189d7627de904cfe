// The open chat's custom fields: the company's definitions that apply to
// chats (GET /settings/custom-fields), one input per type, filled from the
// session's `customFields`, saved with PATCH /chat/sessions/:id
// {customFields} (keys merge on the service; null clears one). When the
// service has no custom fields (404) or the key may not read settings
// (403), the panel stays hidden.

import { listOf } from '../api.js';
import { h } from '../util.js';

const INPUT_TYPES = { text: 'text', number: 'number', date: 'date', datetime: 'datetime-local' };

/** Sets this part up on the console `c` and adds its functions to it. */
export function setUpFields(c) {
  const { el, s, api, on } = c;
  Object.assign(c, { showFields, hideFields });
  let shown = { id: null, definitions: [], values: {} };

  /** Definitions are read again for each chat opened: they may change. */
  async function showFields(session) {
    const id = session?.id;
    if (!id) return;
    let definitions;
    try {
      definitions = listOf(await api('/settings/custom-fields')).filter(
        (d) => Array.isArray(d.appliesTo) && d.appliesTo.includes('chat') && typeof d.key === 'string',
      );
    } catch {
      definitions = [];
    }
    if (s.openId !== id) return;
    shown = { id, definitions, values: { ...(session.customFields ?? {}) } };
    el.fieldsError.hidden = true;
    render();
    el.chatFields.hidden = definitions.length === 0;
  }

  function hideFields() {
    shown = { id: null, definitions: [], values: {} };
    el.chatFields.hidden = true;
    el.fieldsList.replaceChildren();
  }

  function render() {
    el.fieldsList.replaceChildren(...shown.definitions.map((d) => field(d, shown.values[d.key])));
  }

  /** The label and input of one definition, holding `value`. */
  function field(definition, value) {
    const id = `cf-${definition.key}`;
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
  function fromInput(definition, input) {
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

  const same = (a, b) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

  on(el.fieldsForm, 'submit', async (event) => {
    event.preventDefault();
    const { id, definitions, values } = shown;
    if (!id) return;
    // Only the keys that changed: the service merges them into the rest.
    const changes = {};
    for (const definition of definitions) {
      const input = el.fieldsList.querySelector(`[data-key="${CSS.escape(definition.key)}"]`);
      if (!input) continue;
      const value = fromInput(definition, input);
      const before = definition.type === 'boolean' ? values[definition.key] === true : values[definition.key];
      if (!same(value, before)) changes[definition.key] = value;
    }
    el.fieldsError.hidden = true;
    if (Object.keys(changes).length === 0) return;
    el.fieldsSave.disabled = true;
    try {
      const session = await api(`/chat/sessions/${encodeURIComponent(id)}`, {
        method: 'PATCH',
        body: { customFields: changes },
      });
      if (shown.id !== id) return;
      shown.values = { ...(session?.customFields ?? {}) };
      render();
    } catch (err) {
      const details = (err.details ?? []).map((d) => `${d.field}: ${d.message}`);
      el.fieldsError.textContent = [err.message, ...details].join(' · ');
      el.fieldsError.hidden = false;
    } finally {
      el.fieldsSave.disabled = false;
    }
  });
}
