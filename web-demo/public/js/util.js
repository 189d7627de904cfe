// Small DOM and formatting helpers shared by the demo pages. Everything that
// shows data builds nodes with textContent: no HTML from the network, ever.

/** Creates an element: h('div', {class: 'x', onclick: fn}, child, 'text'). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      el.addEventListener(name.slice(2), value);
    } else if (name === 'class') {
      el.className = value;
    } else if (name === 'dataset') {
      Object.assign(el.dataset, value);
    } else if (value === true) {
      el.setAttribute(name, '');
    } else {
      el.setAttribute(name, String(value));
    }
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export const $ = (selector, root = document) => root.querySelector(selector);
export const $$ = (selector, root = document) => [...root.querySelectorAll(selector)];

/** Calls `fn` once `wait` ms have passed without another call. */
export function debounce(fn, wait) {
  let timer;
  const debounced = (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), wait);
  };
  debounced.cancel = () => clearTimeout(timer);
  return debounced;
}

/** Calls `fn` at most once per `wait` ms (leading edge). */
export function throttle(fn, wait) {
  let last = 0;
  return (...args) => {
    const now = Date.now();
    if (now - last >= wait) {
      last = now;
      fn(...args);
    }
  };
}

/** Up to two initials of a name, for avatars. */
export function initials(name) {
  const parts = String(name ?? '')
    .trim()
    .split(/\s+/)
    .filter(Boolean);
  if (parts.length === 0) return '?';
  return (parts[0][0] + (parts.length > 1 ? parts[parts.length - 1][0] : '')).toUpperCase();
}

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const dayFormat = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });

/** "14:05" today, "Nov 21" before. */
export function shortTime(iso) {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const today = new Date();
  return date.toDateString() === today.toDateString() ? timeFormat.format(date) : dayFormat.format(date);
}

export function clockTime(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '' : timeFormat.format(date);
}

/** "just now", "3 min ago", "2 h ago". */
export function relativeTime(iso) {
  const seconds = Math.round((Date.now() - new Date(iso).getTime()) / 1000);
  if (!Number.isFinite(seconds)) return '';
  if (seconds < 45) return 'just now';
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.round(seconds / 3600)} h ago`;
  return shortTime(iso);
}

/** Key/value pairs of `#a=1&b=2`. */
export function hashParams() {
  return new URLSearchParams(location.hash.replace(/^#/, ''));
}

/** A short-lived notice in the page corner (also read by screen readers). */
export function toast(message, { error = false, timeout = 4500 } = {}) {
  let box = document.querySelector('.toasts');
  if (!box) {
    box = h('div', { class: 'toasts', role: 'status', 'aria-live': 'polite' });
    document.body.append(box);
  }
  const item = h('div', { class: error ? 'toast toast-error' : 'toast' }, message);
  box.append(item);
  setTimeout(() => item.remove(), timeout);
}

/** A random id for client frames and pending messages. */
export function clientId() {
  return crypto.randomUUID ? crypto.randomUUID() : String(Math.random()).slice(2);
}

/** Storage that silently degrades (private mode, disabled storage). */
export function safeStorage(kind) {
  try {
    const store = window[kind];
    const probe = '__sd_probe__';
    store.setItem(probe, '1');
    store.removeItem(probe);
    return store;
  } catch {
    const memory = new Map();
    return {
      getItem: (k) => (memory.has(k) ? memory.get(k) : null),
      setItem: (k, v) => memory.set(k, String(v)),
      removeItem: (k) => memory.delete(k),
    };
  }
}

/**
 * Puts `node` in the page with `put`, in place of an earlier node of its id:
 * a console started again (signed out, then in) builds its parts anew.
 */
export function placed(node, put) {
  document.getElementById(node.id)?.remove();
  put(node);
  return node;
}
