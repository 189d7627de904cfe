// The open chat's tags: shown as a list, added from an input that suggests
// the company's tags (GET /tags?prefix=, through a <datalist>) and removed
// one by one. Every change is one POST …/tags {add|remove}, which changes
// the set atomically on the service; the list then shows what it answers.

import { debounce, h, toast } from '../util.js';

/** A tag as the service will store it (it checks the rest). */
const normalize = (raw) => raw.trim().toLowerCase();

/** Sets this part up on the console `c` and adds its functions to it. */
export function setUpTags(c) {
  const { el, api, on } = c;
  Object.assign(c, { showTags, hideTags });
  // The tags of the open chat, from the service's answers only (session
  // frames on the socket do not carry them).
  let shown = { id: null, tags: [] };

  function showTags(session) {
    if (!session?.id) return;
    if (session.id !== shown.id) {
      el.tagInput.value = '';
      el.tagOptions.replaceChildren();
      showError('');
    }
    shown = { id: session.id, tags: Array.isArray(session.tags) ? [...session.tags] : [] };
    render();
    el.chatTags.hidden = false;
  }

  function hideTags() {
    shown = { id: null, tags: [] };
    el.chatTags.hidden = true;
    el.tagList.replaceChildren();
  }

  function render() {
    el.tagList.replaceChildren(
      ...shown.tags.map((tag) =>
        h(
          'li',
          { class: 'tag', dataset: { tag } },
          h('span', { class: 'tag-name' }, tag),
          h(
            'button',
            { type: 'button', class: 'tag-remove', 'aria-label': `Remove tag ${tag}`, onclick: () => edit({ remove: [tag] }) },
            '×',
          ),
        ),
      ),
    );
    el.tagsEmpty.hidden = shown.tags.length > 0;
  }

  function showError(message) {
    el.tagError.textContent = message;
    el.tagError.hidden = !message;
  }

  /** One atomic change; the list becomes the set the service answers. */
  async function edit(change) {
    const id = shown.id;
    if (!id) return;
    showError('');
    el.tagAdd.disabled = true;
    try {
      const session = await api(`/chat/sessions/${encodeURIComponent(id)}/tags`, { method: 'POST', body: change });
      if (shown.id !== id) return;
      shown.tags = Array.isArray(session?.tags) ? session.tags : shown.tags;
      render();
      return true;
    } catch (err) {
      const detail = err.details?.[0]?.message;
      showError(detail ? `${err.message}: ${detail}` : err.message);
      if (err.status === 0) toast(err.message, { error: true });
      return false;
    } finally {
      el.tagAdd.disabled = false;
    }
  }

  on(el.tagForm, 'submit', async (event) => {
    event.preventDefault();
    const tag = normalize(el.tagInput.value);
    if (!tag) return;
    if (await edit({ add: [tag] })) {
      el.tagInput.value = '';
      el.tagOptions.replaceChildren();
    }
    el.tagInput.focus();
  });

  // Suggestions: the company's tags starting with what is typed, most used
  // first, without those the chat already has. A stale answer (the input
  // changed meanwhile) is dropped.
  const suggest = debounce(async () => {
    const prefix = normalize(el.tagInput.value);
    try {
      const query = new URLSearchParams({ limit: '20' });
      if (prefix) query.set('prefix', prefix);
      const answer = await api(`/tags?${query}`);
      if (normalize(el.tagInput.value) !== prefix) return;
      const options = (answer?.data ?? []).map((t) => t.tag).filter((tag) => typeof tag === 'string' && !shown.tags.includes(tag));
      el.tagOptions.replaceChildren(...options.map((tag) => h('option', { value: tag })));
    } catch {
      // No suggestions (a prefix that cannot be a tag, a key without
      // tickets:read): typing a tag still works.
      el.tagOptions.replaceChildren();
    }
  }, 150);
  on(el.tagInput, 'input', suggest);
  on(el.tagInput, 'focus', suggest);
}
