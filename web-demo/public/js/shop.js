// The made-up shop's own script. "Sign in as a customer" stands in for the
// shop's login: its backend (here the demo's identity-token route) signs an
// identity token, and the page hands it to the widget with identify().

const button = document.getElementById('sign-in');
const account = document.getElementById('account');
const replies = document.getElementById('replies');
const widgetKey = document.querySelector('script[data-widget-key]')?.dataset.widgetKey ?? '';
// The signed-in customer lasts the tab, as a shop's login cookie would.
const SAVED = 'teapots:customer';

/** Runs `use` with the widget's API once the async loader has run. */
function withWidget(use) {
  if (window.Supportdesk?.__loaded) use(window.Supportdesk);
  else window.addEventListener('supportdesk:ready', () => use(window.Supportdesk), { once: true });
}

function signedIn({ token, visitor }) {
  account.textContent = `Signed in as ${visitor.name}`;
  button.hidden = true;
  withWidget((widget) => widget.identify({ token }));
}

async function signIn() {
  button.disabled = true;
  try {
    const response = await fetch('identity-token', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ widgetKey }),
    });
    const data = await response.json().catch(() => null);
    if (response.status === 404) throw new Error('Signing in needs the demo enabled (serve --demo).');
    if (!response.ok) throw new Error(data?.error ?? 'Signing in failed.');
    sessionStorage.setItem(SAVED, JSON.stringify(data));
    signedIn(data);
  } catch (err) {
    account.textContent = err.message;
  } finally {
    button.disabled = false;
  }
}

button.addEventListener('click', signIn);

withWidget((widget) => {
  widget.on('unread', ({ count }) => {
    replies.textContent = `Support replied (${count} unread): open the chat in the corner.`;
    replies.hidden = false;
  });
  widget.on('open', () => {
    replies.hidden = true;
  });
});

// Back on the page after signing in: identify at once, before the widget's
// frame has loaded (the loader keeps the call until the frame is ready).
try {
  const saved = JSON.parse(sessionStorage.getItem(SAVED) ?? 'null');
  if (saved?.token && saved?.visitor) signedIn(saved);
} catch {
  sessionStorage.removeItem(SAVED);
}
