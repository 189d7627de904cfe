// Desktop notifications (the Notification API) of what calls for this agent
// while they may be looking elsewhere: a chat or a ticket assigned to them,
// a note mentioning them (see assigned.js and ticket-notices.js). Browsers
// grant the permission only when asked from a user gesture, so the console
// asks from the click on its "Desktop notifications" button, which shows
// only while the agent has not answered yet; once granted, each such notice
// goes to the desktop too, and clicking it brings the console back.

export class DesktopNotices {
  /**
   * @param {object} options
   * @param {HTMLButtonElement} options.button  asks for the permission when clicked
   * @param {AbortSignal} options.signal  ends the button's listener (sign out)
   */
  constructor({ button, signal }) {
    this.button = button;
    this.supported = typeof window.Notification === 'function';
    button.addEventListener('click', () => this.ask(), { signal });
    this.renderButton();
  }

  /** The button shows while the browser would still ask. */
  renderButton() {
    this.button.hidden = !this.supported || Notification.permission !== 'default';
  }

  async ask() {
    if (!this.supported) return;
    try {
      await Notification.requestPermission();
    } finally {
      this.renderButton();
    }
  }

  /**
   * Shows `title` with `body` on the desktop when the agent allowed it;
   * `tag` replaces an earlier notice of the same thing, `onClick` runs when
   * the agent clicks it (the console's window comes to the front first).
   */
  show(title, { body, tag, onClick } = {}) {
    if (!this.supported || Notification.permission !== 'granted') return;
    const notice = new Notification(title, { body, tag, icon: '/app/favicon.svg' });
    notice.addEventListener('click', () => {
      window.focus();
      onClick?.();
      notice.close();
    });
  }
}
