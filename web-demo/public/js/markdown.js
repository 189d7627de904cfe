// A deliberately small Markdown reader for knowledge-base articles: headings,
// paragraphs, lists and emphasis become DOM nodes built with textContent, so
// article text can never inject markup.

import { h } from './util.js';

const INLINE = /(\*\*[^*]+\*\*|__[^_]+__|`[^`]+`|\[[^\]]+\]\([^)]+\))/g;

function inline(text) {
  const nodes = [];
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    if (match.index > last) nodes.push(text.slice(last, match.index));
    const token = match[0];
    if (token.startsWith('**') || token.startsWith('__')) {
      nodes.push(h('strong', {}, token.slice(2, -2)));
    } else if (token.startsWith('`')) {
      nodes.push(h('code', {}, token.slice(1, -1)));
    } else {
      // [label](url): only the label is shown; links stay out of the widget.
      nodes.push(token.slice(1, token.indexOf('](')));
    }
    last = match.index + token.length;
  }
  if (last < text.length) nodes.push(text.slice(last));
  return nodes;
}

/** Renders Markdown `source` into `target` (cleared first). */
export function renderMarkdown(target, source) {
  target.replaceChildren();
  const blocks = String(source ?? '')
    .replace(/\r\n/g, '\n')
    .split(/\n{2,}/);
  for (const block of blocks) {
    const lines = block.split('\n').filter((l) => l.trim() !== '');
    if (lines.length === 0) continue;
    if (lines.every((l) => /^\s*([-*+]|\d+[.)])\s+/.test(l))) {
      const ordered = /^\s*\d/.test(lines[0]);
      const list = h(ordered ? 'ol' : 'ul');
      for (const line of lines) list.append(h('li', {}, inline(line.replace(/^\s*([-*+]|\d+[.)])\s+/, ''))));
      target.append(list);
    } else if (/^#{1,6}\s/.test(lines[0])) {
      target.append(h('h4', {}, inline(lines[0].replace(/^#+\s*/, ''))));
      if (lines.length > 1) target.append(h('p', {}, inline(lines.slice(1).join(' '))));
    } else {
      target.append(h('p', {}, inline(lines.join(' '))));
    }
  }
}
