// The open chat's custom fields: the company's definitions that apply to
// chats (GET /settings/custom-fields), one input per type, filled from the
// session's `customFields`, saved with PATCH /chat/sessions/:id
// {customFields} (keys merge on the service; null clears one). When the
// service has no custom fields (404) or the key may not read settings
// (403), the panel stays hidden.

import { listOf } from '../api.js';
import { fieldInput, fromInput } from './field-inputs.js';

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
    el.fieldsList.replaceChildren(...shown.definitions.map((d) => fieldInput(d, shown.values[d.key])));
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
