// A modal <dialog> that keeps the keyboard inside while open (Tab from the
// last control goes to the first, Shift+Tab from the first to the last:
// showModal() alone lets Tab leave for the browser's own controls), closes on
// Escape, and gives focus back on close to what had it before.

import { matches } from './keys.js';

const FOCUSABLE = 'a[href], button, input, select, textarea, [tabindex]:not([tabindex="-1"])';

/** The dialog's controls that Tab reaches now, in order. */
function focusables(dialog) {
  return [...dialog.querySelectorAll(FOCUSABLE)].filter(
    (node) => !node.disabled && !node.closest('[hidden]') && node.getClientRects().length > 0,
  );
}

export class Modal {
  /** @param {HTMLDialogElement} dialog */
  constructor(dialog) {
    this.dialog = dialog;
    this.returnTo = null;
    dialog.addEventListener('keydown', (event) => this.onKey(event));
    dialog.addEventListener('close', () => this.restore());
  }

  /**
   * Opens the dialog and focuses `first`; on close, focus goes back to
   * `returnTo` (by default whatever had it).
   */
  open(first, returnTo = document.activeElement) {
    this.returnTo = returnTo instanceof HTMLElement && returnTo !== document.body ? returnTo : null;
    if (!this.dialog.open) this.dialog.showModal();
    first?.focus();
  }

  close() {
    if (this.dialog.open) this.dialog.close();
  }

  get isOpen() {
    return this.dialog.open;
  }

  /** Hands the focus to return to on to the next dialog (one opened from this one). */
  handOver() {
    const returnTo = this.returnTo;
    this.returnTo = null;
    return returnTo;
  }

  restore() {
    const target = this.returnTo;
    this.returnTo = null;
    if (target?.isConnected) target.focus();
  }

  onKey(event) {
    if (matches('dialog-close', event)) {
      event.preventDefault();
      this.close();
      return;
    }
    if (event.key !== 'Tab' || event.ctrlKey || event.altKey || event.metaKey) return;
    const controls = focusables(this.dialog);
    if (controls.length === 0) return;
    const first = controls[0];
    const last = controls[controls.length - 1];
    const at = document.activeElement;
    const outside = !this.dialog.contains(at);
    if (event.shiftKey && (at === first || outside)) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && (at === last || outside)) {
      event.preventDefault();
      first.focus();
    }
  }
}
