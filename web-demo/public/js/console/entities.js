// The entity picker, and the link to the entity's visitor widget (the
// demo's visitor page, served with the demo enabled).

import { h } from '../util.js';

export const ENTITY_ITEM = 'sd-agent-entity';

/** Sets this part up on the console `c` and adds its functions to it. */
export function setUpEntities(c) {
  const { el, s, me, entities, storage, on } = c;
  Object.assign(c, { showWidgetLink, switchEntity });

  el.entity.replaceChildren(...entities.map((e) => h('option', { value: e.id }, e.name)));
  el.entity.value = s.entityId;
  on(el.entity, 'change', () => switchEntity(el.entity.value));

  function showWidgetLink() {
    const entity = entities.find((e) => e.id === s.entityId);
    // The widget key of the data the agent works on (TEST or LIVE).
    const widgetKey = (me.mode === 'TEST' ? entity?.widgetKeyTest : entity?.widgetKeyLive) ?? '';
    const href = `/demo/visitor.html#widgetKey=${encodeURIComponent(widgetKey)}`;
    el.widgetLink.href = href;
    el.emptyWidgetLink.href = href;
    el.widgetKey.textContent = widgetKey || 'not available';
  }

  function switchEntity(entityId) {
    if (entityId === s.entityId) return;
    s.entityId = entityId;
    el.entity.value = entityId;
    storage.setItem(ENTITY_ITEM, entityId);
    c.syncEntityChannels();
    c.closeThread();
    s.sessions.clear();
    c.renderSessions();
    showWidgetLink();
    c.loadSessions();
    c.renderAssigned();
  }
}
