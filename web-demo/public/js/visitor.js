// The visitor widget. It knows the entity's public widget key (from the page
// address) and, once a chat starts, its own session's visitor token; never
// an API key. Public API: /widget/v1 (sessions, presence, kb). Live chat:
// /api/v1/ws?token=<visitorToken>.
//
// Each concern is a module of visitor/; this one wires them in the order
// the page needs and starts the widget.

import { hashParams } from './util.js';
import { startConversation } from './visitor/chat.js';
import { wireComposer } from './visitor/composer.js';
import { wireKnowledge } from './visitor/knowledge.js';
import { setOpen, showMissing, wirePanel } from './visitor/panel.js';
import { refreshPresence, renderPresence, schedulePresence, wirePresence } from './visitor/presence.js';
import { wireStart } from './visitor/start.js';
import { config, openOnLoad, state } from './visitor/state.js';

wirePanel({ onResume: startConversation });
wirePresence();
wireKnowledge();
wireStart();
wireComposer();

// A new address for this same page (a pasted link, another widget key):
// start over from it, as a fresh load would.
window.addEventListener('hashchange', () => {
  const next = hashParams();
  if (next.get('session') || (next.get('widgetKey') && next.get('widgetKey') !== config.widgetKey)) {
    location.reload();
  }
});

// --- Start ------------------------------------------------------------------

renderPresence(null);
if (!config.widgetKey && !state.conversation) showMissing('This widget is not set up');
refreshPresence().finally(schedulePresence);
if (openOnLoad) setOpen(true);
// A chat in progress stays live while the panel is closed (unread badge).
else if (state.conversation) startConversation();
