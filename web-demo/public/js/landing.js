// Landing page: open the visitor widget with a pasted widget key.

import { $ } from './util.js';

const form = $('#widget-form');
const input = $('#widget-key');
const error = $('#widget-error');

form.addEventListener('submit', (event) => {
  event.preventDefault();
  const key = input.value.trim();
  if (!/^wk_(test|live)_[A-Za-z0-9]+$/.test(key)) {
    error.textContent = 'A widget key looks like wk_test_ followed by letters and digits.';
    error.hidden = false;
    input.setAttribute('aria-invalid', 'true');
    input.focus();
    return;
  }
  location.href = `visitor.html#widgetKey=${encodeURIComponent(key)}`;
});

input.addEventListener('input', () => {
  error.hidden = true;
  input.removeAttribute('aria-invalid');
});
