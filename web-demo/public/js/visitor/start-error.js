// The start form's error line, which the chat also uses when a stored
// conversation turns out to be gone (kept apart so the chat, which the
// start form opens, need not import the form).

import { el } from './dom.js';

export function startError(message, field) {
  el.startError.textContent = message;
  el.startError.hidden = false;
  if (field) {
    field.setAttribute('aria-invalid', 'true');
    field.focus();
  }
}
