// Knowledge-base suggestions while the visitor types, and reading an article.

import { request } from '../api.js';
import { renderMarkdown } from '../markdown.js';
import { $, h, debounce } from '../util.js';
import { el } from './dom.js';
import { currentMainView, focusView, showView } from './panel.js';
import { state, config } from './state.js';

function suggester(section, limit) {
  let controller = null;
  const list = $('.sd-suggestion-list', section);
  const run = debounce(async (text) => {
    controller?.abort();
    if (!config.widgetKey || text.trim().length < 3) {
      section.hidden = true;
      return;
    }
    controller = new AbortController();
    try {
      const query = new URLSearchParams({ widgetKey: config.widgetKey, q: text.trim(), limit: String(limit) });
      const hits = await request(`/widget/v1/kb/search?${query}`, { signal: controller.signal });
      renderSuggestions(section, list, Array.isArray(hits) ? hits.slice(0, limit) : []);
    } catch (err) {
      if (err?.name !== 'AbortError') section.hidden = true;
    }
  }, 250);
  return run;
}

function renderSuggestions(section, list, hits) {
  list.replaceChildren(
    ...hits.map((hit) =>
      h(
        'li',
        {},
        h(
          'button',
          { type: 'button', class: 'sd-suggestion', onclick: () => openArticle(hit) },
          h('span', { class: 'sd-suggestion-title' }, articleIcon(), hit.title),
          hit.excerpt ? h('span', { class: 'sd-suggestion-excerpt' }, hit.excerpt) : null,
        ),
      ),
    ),
  );
  section.hidden = hits.length === 0;
}

function articleIcon() {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('width', '14');
  svg.setAttribute('height', '14');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  const path = document.createElementNS('http://www.w3.org/2000/svg', 'path');
  path.setAttribute('d', 'M6 3h9l4 4v14H6zM14 3v5h5M9 13h7M9 17h5');
  path.setAttribute('fill', 'none');
  path.setAttribute('stroke', 'currentColor');
  path.setAttribute('stroke-width', '1.8');
  path.setAttribute('stroke-linejoin', 'round');
  svg.append(path);
  return svg;
}

async function openArticle(hit) {
  el.articleTitle.textContent = hit.title;
  el.articleCategory.textContent = hit.category?.name ?? '';
  renderMarkdown(el.articleContent, hit.excerpt ?? '');
  showView('article');
  el.articleBack.focus();
  try {
    const query = new URLSearchParams({ widgetKey: config.widgetKey });
    const article = await request(`/widget/v1/kb/articles/${encodeURIComponent(hit.id)}?${query}`);
    el.articleTitle.textContent = article.title;
    renderMarkdown(el.articleContent, article.content || article.excerpt || '');
  } catch {
    // The excerpt stays: better than nothing.
  }
}

const suggestForQuestion = suggester(el.startSuggestions, 4);
export const suggestForComposer = suggester(el.chatSuggestions, 3);

export function wireKnowledge() {
  el.articleBack.addEventListener('click', () => {
    showView(state.previousView ?? currentMainView());
    focusView();
  });

  el.question.addEventListener('input', () => suggestForQuestion(el.question.value));
}
