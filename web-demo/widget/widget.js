// supportdesk widget loader. A customer's page includes it with one tag:
//   <script src="https://desk.example.com/widget.js" data-widget-key="wk_live_…" async></script>
// It adds a launcher button and opens the chat in an iframe from our origin.
// Page and chat talk only through postMessage, each side checking the other's
// origin. Styles are set through the DOM (never a <style> element), so a host
// CSP that allows our origin in script-src and frame-src is enough.
(function () {
  'use strict';
  if (window.Supportdesk && window.Supportdesk.__loaded) return;
  // Calls a page made before this async script ran, as [name, ...args]
  // pushed onto a `window.Supportdesk = window.Supportdesk || []` stub.
  var early = Array.isArray(window.Supportdesk) ? window.Supportdesk.slice() : [];

  var script = document.currentScript || document.querySelector('script[data-widget-key]');
  if (!script || !script.src) return;
  var ORIGIN = new URL(script.src, location.href).origin;
  var settings = readSettings(script.dataset || {}, window.SupportdeskSettings || {});
  if (!settings.widgetKey) {
    if (window.console) console.warn('supportdesk: no data-widget-key on the widget script');
    return;
  }

  var listeners = {};
  var queue = [];
  var ready = false;
  var isOpen = false;
  var unread = 0;
  var frame, launcher, badge;
  var phone = !!(window.matchMedia && window.matchMedia('(max-width: 480px)').matches);

  function readSettings(data, global) {
    function pick(name, dataName) {
      var value = global[name] !== undefined ? global[name] : data[dataName || name];
      return value === undefined || value === null ? undefined : value;
    }
    var hide = pick('hideLauncher');
    return {
      widgetKey: String(pick('widgetKey') || '').trim(),
      position: pick('position') === 'left' ? 'left' : 'right',
      colour: /^#[0-9a-fA-F]{3,8}$/.test(pick('colour') || pick('color') || '') ? pick('colour') || pick('color') : '#0f766e',
      greeting: pick('greeting') ? String(pick('greeting')).slice(0, 200) : '',
      locale:
        String(pick('locale') || navigator.language || 'en')
          .slice(0, 2)
          .toLowerCase() === 'fr'
          ? 'fr'
          : 'en',
      hideLauncher: hide === true || hide === 'true' || hide === '',
    };
  }

  function css(node, styles) {
    for (var key in styles) node.style.setProperty(key, styles[key]);
  }

  function svg(path) {
    var ns = 'http://www.w3.org/2000/svg';
    var icon = document.createElementNS(ns, 'svg');
    icon.setAttribute('width', '26');
    icon.setAttribute('height', '26');
    icon.setAttribute('viewBox', '0 0 24 24');
    icon.setAttribute('aria-hidden', 'true');
    var p = document.createElementNS(ns, 'path');
    p.setAttribute('d', path);
    p.setAttribute('fill', 'none');
    p.setAttribute('stroke', '#fff');
    p.setAttribute('stroke-width', '2');
    p.setAttribute('stroke-linecap', 'round');
    p.setAttribute('stroke-linejoin', 'round');
    icon.appendChild(p);
    return icon;
  }

  var CHAT_ICON = 'M21 12a8 8 0 0 1-11.6 7.1L4 20l1-4.4A8 8 0 1 1 21 12z';
  var CLOSE_ICON = 'M6 6l12 12M18 6L6 18';
  var LABELS = {
    en: { open: 'Open the support chat', close: 'Close the support chat', frame: 'Support chat' },
    fr: { open: 'Ouvrir la discussion avec le support', close: 'Fermer la discussion', frame: 'Discussion avec le support' },
  };
  var label = LABELS[settings.locale];

  function build() {
    var side = settings.position;
    frame = document.createElement('iframe');
    var hash = new URLSearchParams({
      widgetKey: settings.widgetKey,
      parentOrigin: location.origin,
      locale: settings.locale,
      colour: settings.colour,
      greeting: settings.greeting,
    });
    frame.src = ORIGIN + '/widget/frame.html#' + hash.toString();
    frame.title = label.frame;
    frame.setAttribute('allow', 'clipboard-write');
    frame.setAttribute('referrerpolicy', 'no-referrer');
    css(frame, {
      position: 'fixed',
      bottom: '96px',
      width: '380px',
      height: '600px',
      'max-height': 'calc(100vh - 120px)',
      'max-width': 'calc(100vw - 32px)',
      border: '0',
      'border-radius': '14px',
      'box-shadow': '0 12px 40px rgba(0,0,0,.25)',
      background: '#fff',
      'z-index': '2147483646',
      display: 'none',
    });
    frame.style.setProperty(side, '20px');
    if (phone) {
      css(frame, { bottom: '0', width: '100vw', height: '100vh', 'max-height': '100vh', 'max-width': '100vw', 'border-radius': '0' });
      frame.style.setProperty(side, '0');
    }
    document.body.appendChild(frame);

    launcher = document.createElement('button');
    launcher.type = 'button';
    launcher.setAttribute('aria-label', label.open);
    launcher.setAttribute('aria-expanded', 'false');
    launcher.setAttribute('data-supportdesk', 'launcher');
    css(launcher, {
      position: 'fixed',
      bottom: '20px',
      width: '60px',
      height: '60px',
      'border-radius': '50%',
      border: '0',
      padding: '0',
      cursor: 'pointer',
      background: settings.colour,
      'box-shadow': '0 6px 20px rgba(0,0,0,.25)',
      'z-index': '2147483647',
      display: settings.hideLauncher ? 'none' : 'flex',
      'align-items': 'center',
      'justify-content': 'center',
    });
    launcher.style.setProperty(side, '20px');
    launcher.appendChild(svg(CHAT_ICON));
    badge = document.createElement('span');
    css(badge, {
      position: 'absolute',
      top: '-2px',
      right: '-2px',
      'min-width': '20px',
      height: '20px',
      'border-radius': '10px',
      background: '#dc2626',
      color: '#fff',
      font: 'bold 12px/20px sans-serif',
      'text-align': 'center',
      display: 'none',
    });
    launcher.appendChild(badge);
    launcher.addEventListener('click', function () {
      isOpen ? close() : open();
    });
    document.body.appendChild(launcher);
  }

  function post(message) {
    message.sd = 1;
    if (!ready) {
      queue.push(message);
      return;
    }
    // Never '*': only our frame's origin may read what the page sends.
    frame.contentWindow.postMessage(message, ORIGIN);
  }

  function emit(name, data) {
    (listeners[name] || []).slice().forEach(function (fn) {
      try {
        fn(data);
      } catch (err) {
        if (window.console) console.error(err);
      }
    });
  }

  function setUnread(count) {
    unread = count;
    badge.textContent = count > 9 ? '9+' : String(count);
    badge.style.display = count > 0 && !isOpen ? 'block' : 'none';
  }

  function open() {
    if (!frame) {
      early.push(['open']);
      return;
    }
    if (isOpen) return;
    isOpen = true;
    frame.style.display = 'block';
    // Full screen on a phone: the frame's own close button is the way out.
    if (phone) launcher.style.display = 'none';
    launcher.setAttribute('aria-expanded', 'true');
    launcher.setAttribute('aria-label', label.close);
    launcher.replaceChild(svg(CLOSE_ICON), launcher.firstChild);
    setUnread(0);
    post({ type: 'open' });
    emit('open');
  }

  function close() {
    if (!frame) {
      early.push(['close']);
      return;
    }
    if (!isOpen) return;
    isOpen = false;
    frame.style.display = 'none';
    if (!settings.hideLauncher) launcher.style.display = 'flex';
    launcher.setAttribute('aria-expanded', 'false');
    launcher.setAttribute('aria-label', label.open);
    launcher.replaceChild(svg(CHAT_ICON), launcher.firstChild);
    post({ type: 'close' });
    emit('close');
  }

  window.addEventListener('message', function (event) {
    // Only our own frame speaks to the loader.
    if (!frame || event.origin !== ORIGIN || event.source !== frame.contentWindow) return;
    var data = event.data;
    if (!data || data.sd !== 1 || typeof data.type !== 'string') return;
    if (data.type === 'ready') {
      ready = true;
      var pending = queue;
      queue = [];
      pending.forEach(function (m) {
        frame.contentWindow.postMessage(m, ORIGIN);
      });
    } else if (data.type === 'message') {
      if (!isOpen) setUnread(unread + 1);
      emit('message', data.message);
      if (!isOpen) emit('unread', { count: unread });
    } else if (data.type === 'close') {
      close();
    }
  });

  window.Supportdesk = {
    __loaded: true,
    open: open,
    close: close,
    /** `{token}`: a JWT from the site's backend (see the docs). */
    identify: function (options) {
      var token = options && typeof options.token === 'string' ? options.token : '';
      if (token) post({ type: 'identify', token: token });
    },
    /** `'message' | 'open' | 'close' | 'unread'`. */
    on: function (name, fn) {
      if (typeof fn !== 'function') return;
      (listeners[name] = listeners[name] || []).push(fn);
    },
    /** Values of the company's visitor-writable custom fields; others are
     * ignored (the chat starts, and the console warns). */
    setCustomFields: function (fields) {
      if (fields && typeof fields === 'object') post({ type: 'customFields', fields: JSON.parse(JSON.stringify(fields)) });
    },
  };

  function start() {
    build();
    early.forEach(function (call) {
      var name = call && call[0];
      if (typeof name === 'string' && name !== '__loaded' && typeof window.Supportdesk[name] === 'function') {
        window.Supportdesk[name].apply(null, call.slice(1));
      }
    });
    early = [];
    // The script loads async: a page waits for this before calling the API.
    window.dispatchEvent(new CustomEvent('supportdesk:ready'));
  }
  if (document.body) start();
  else document.addEventListener('DOMContentLoaded', start);
})();
