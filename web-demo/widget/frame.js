// The chat inside the widget's iframe, on our origin. It knows the entity's
// public widget key and its own session's visitor token, never an API key.
// The host page reaches it only through postMessage, checked against the
// page origin the loader gave (and the loader checks ours).

const params = new URLSearchParams(location.hash.slice(1));
const widgetKey = params.get('widgetKey') ?? '';
// The continue link of an agent-reply email: `#session=<id>&link=<vl_…>`,
// a one-time link token traded for a visitor token on arrival.
const linkToken = params.get('link');
if (linkToken) history.replaceState(null, '', `${location.pathname}${location.search}`);
const parentOrigin = originOf(params.get('parentOrigin'));
const locale = params.get('locale') === 'fr' ? 'fr' : 'en';
const STORE = `sd-chat:${widgetKey}`;

const $ = (id) => document.getElementById(id);
const ui = {
  messages: $('messages'),
  note: $('note'),
  start: $('start'),
  composer: $('composer'),
  input: $('input'),
  name: $('name'),
  email: $('email'),
  question: $('question'),
  greeting: $('greeting'),
  queue: $('queue'),
};

let text = {};
let identityToken = null;
let customFields = null;
let socket = null;
let conversation = load();
let refreshTimer = null;
const seen = new Set();
// Ids of this chat's own messages (not the earlier chats shown above it):
// the socket resumes after the newest of these.
const own = new Set();

function originOf(value) {
  try {
    const origin = new URL(value).origin;
    return origin === value ? origin : null;
  } catch {
    return null;
  }
}

function load() {
  try {
    const saved = JSON.parse(localStorage.getItem(STORE) ?? 'null');
    return saved?.sessionId && saved?.token ? saved : null;
  } catch {
    return null;
  }
}

function save(value) {
  try {
    if (value) localStorage.setItem(STORE, JSON.stringify(value));
    else localStorage.removeItem(STORE);
  } catch {
    // Storage may be blocked for third-party frames: the chat lasts the page.
  }
}

/** To the host page, and only to the origin the loader named. */
function tell(type, data = {}) {
  if (parentOrigin && window.parent !== window) window.parent.postMessage({ sd: 1, type, ...data }, parentOrigin);
}

async function api(path, { method = 'GET', body, token } = {}) {
  const headers = { Accept: 'application/json' };
  if (body) headers['Content-Type'] = 'application/json';
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(path, { method, headers, body: body && JSON.stringify(body), credentials: 'omit', cache: 'no-store' });
  const data = await response.json().catch(() => null);
  if (!response.ok) throw Object.assign(new Error(data?.error ?? text.failed), { status: response.status });
  return data;
}

function render(message, { earlier = false } = {}) {
  if (seen.has(message.id)) return false;
  seen.add(message.id);
  if (!earlier) own.add(message.id);
  const li = document.createElement('li');
  li.className = `${message.senderType}${earlier ? ' earlier' : ''}`;
  li.dataset.id = message.id;
  const who = document.createElement('span');
  who.className = 'who';
  who.textContent = message.senderType === 'visitor' ? text.you : (message.senderName ?? text.agent);
  li.append(who, document.createTextNode(message.body));
  showAttachments(li, message.attachments);
  ui.messages.append(li);
  ui.messages.scrollTop = ui.messages.scrollHeight;
  return true;
}

function divider(label) {
  const li = document.createElement('li');
  li.className = 'divider';
  li.textContent = label;
  ui.messages.append(li);
}

function showChat(closed = false) {
  ui.start.hidden = true;
  ui.composer.hidden = closed;
  if (closed) {
    ui.note.textContent = text.closed;
    showQueuePosition(null);
  }
}

/** "You are number 3 in line" while the chat waits for an agent; null hides it. */
function showQueuePosition(position) {
  ui.queue.hidden = !position;
  ui.queue.textContent = position ? text.queuePosition.replace('{position}', String(position)) : '';
}

function connect() {
  if (socket || !conversation) return;
  const current = conversation;
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  let attempt = 0;
  const open = () => {
    const ws = new WebSocket(`${scheme}//${location.host}/api/v1/ws?token=${encodeURIComponent(current.token)}`);
    socket = ws;
    ws.onopen = () => {
      attempt = 0;
      ui.note.textContent = '';
      const last = [...own].sort().pop();
      ws.send(JSON.stringify({ type: 'subscribe', channel: `session:${current.sessionId}`, ...(last ? { since: last } : {}) }));
    };
    ws.onmessage = (event) => onFrame(JSON.parse(event.data));
    ws.onclose = () => {
      if (socket !== ws || conversation !== current) return;
      ui.note.textContent = text.offline;
      attempt += 1;
      setTimeout(open, Math.min(30_000, 500 * 2 ** attempt));
    };
  };
  ui.note.textContent = text.connecting;
  open();
}

function onFrame(frame) {
  if (frame.type === 'chat.message' && frame.data?.sessionId === conversation?.sessionId) {
    if (render(frame.data) && frame.data.senderType !== 'visitor') {
      tell('message', { message: { id: frame.data.id, body: frame.data.body, senderName: frame.data.senderName ?? null } });
    }
  } else if (frame.type === 'chat.session' && frame.data?.id === conversation?.sessionId) {
    showChat(frame.data.status === 'CLOSED');
  } else if (frame.type === 'queue' && typeof frame.data?.position === 'number') {
    showQueuePosition(frame.data.position);
  } else if (frame.type === 'assignment' && frame.data?.sessionId === conversation?.sessionId) {
    // Assigned: out of the queue. Sent back to the queue: a `queue` frame follows.
    if (frame.data.assigned) showQueuePosition(null);
  } else if (frame.type === 'rating_requested' && frame.data?.chatSessionId === conversation?.sessionId) {
    showRating();
  } else if (frame.type === 'error') {
    ui.note.textContent = frame.error ?? text.failed;
  }
}

/** The rating card an agent's close (or request) brings: 1-5 stars and a comment. */
function showRating() {
  if (document.getElementById('rating')) return;
  const form = document.createElement('form');
  form.id = 'rating';
  form.className = 'rating';
  const title = document.createElement('p');
  title.textContent = text.rateTitle;
  const stars = document.createElement('div');
  stars.className = 'stars';
  stars.setAttribute('role', 'radiogroup');
  stars.setAttribute('aria-label', text.rateTitle);
  let score = 0;
  for (let n = 1; n <= 5; n += 1) {
    const star = document.createElement('button');
    star.type = 'button';
    star.textContent = '\u2605';
    star.dataset.score = String(n);
    star.setAttribute('role', 'radio');
    star.setAttribute('aria-checked', 'false');
    star.setAttribute('aria-label', `${n} / 5`);
    star.addEventListener('click', () => {
      score = n;
      for (const other of stars.children) {
        const on = Number(other.dataset.score) <= n;
        other.classList.toggle('on', on);
        other.setAttribute('aria-checked', String(Number(other.dataset.score) === n));
      }
    });
    stars.append(star);
  }
  const comment = document.createElement('textarea');
  comment.id = 'rating-comment';
  comment.maxLength = 2000;
  comment.rows = 2;
  comment.placeholder = text.rateComment;
  comment.setAttribute('aria-label', text.rateComment);
  const submit = document.createElement('button');
  submit.type = 'submit';
  submit.textContent = text.rateSend;
  form.append(title, stars, comment, submit);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!score) {
      ui.note.textContent = text.ratePick;
      return;
    }
    try {
      await api('/widget/v1/ratings', {
        method: 'POST',
        token: conversation.token,
        body: { score, comment: comment.value.trim() || undefined },
      });
      form.replaceChildren(Object.assign(document.createElement('p'), { textContent: text.rateThanks }));
    } catch (err) {
      ui.note.textContent = err.message;
    }
  });
  ui.composer.after(form);
}

function send(body) {
  if (socket?.readyState === WebSocket.OPEN) {
    const attachmentIds = takePendingFiles();
    socket.send(
      JSON.stringify({ type: 'message', sessionId: conversation.sessionId, body, ...(attachmentIds.length ? { attachmentIds } : {}) }),
    );
    return true;
  }
  ui.note.textContent = text.offline;
  return false;
}

/**
 * Visitor tokens are short-lived: trade the current one for a fresh one at
 * half its life, for as long as the chat is open here. The socket takes the
 * fresh one at its next reconnect (`conversation.token` is read then).
 */
function keepFresh() {
  clearTimeout(refreshTimer);
  const current = conversation;
  if (!current) return;
  const left = Date.parse(current.expiresAt ?? '') - Date.now();
  const wait = Number.isFinite(left) ? Math.max(5_000, left / 2) : 60_000;
  refreshTimer = setTimeout(async () => {
    if (conversation !== current) return;
    try {
      const fresh = await api('/widget/v1/tokens/refresh', { method: 'POST', token: current.token });
      current.token = fresh.visitorToken;
      current.expiresAt = fresh.visitorTokenExpiresAt;
      save(current);
      keepFresh();
    } catch (err) {
      // Refused (expired, revoked): the chat ends here; otherwise try again soon.
      if (err.status === 401 || err.status === 403) forget();
      else refreshTimer = setTimeout(keepFresh, 10_000);
    }
  }, wait);
}

function forget() {
  clearTimeout(refreshTimer);
  conversation = null;
  save(null);
  ui.start.hidden = false;
}

/** Trades an email's link token for a visitor token of its session. */
async function exchangeLink(link) {
  const issued = await api('/widget/v1/tokens/exchange', { method: 'POST', body: { linkToken: link } });
  conversation = { sessionId: issued.sessionId, token: issued.visitorToken, expiresAt: issued.visitorTokenExpiresAt };
  save(conversation);
}

async function resume() {
  try {
    const session = await api(`/widget/v1/sessions/${encodeURIComponent(conversation.sessionId)}`, { token: conversation.token });
    for (const message of session.messages) render(message);
    showChat(session.status === 'CLOSED');
    keepFresh();
    connect();
  } catch (err) {
    if (err.status === 401 || err.status === 404) {
      forget();
    } else {
      ui.note.textContent = err.message;
    }
  }
}

/**
 * A verified visitor's earlier chats (another device, another day): listed
 * with the identity token the page just gave (it must be recent).
 */
async function showEarlier() {
  if (!identityToken) return;
  const { data } = await api(`/widget/v1/sessions?widgetKey=${encodeURIComponent(widgetKey)}`, { token: identityToken });
  const earlier = data
    .filter((s) => s.id !== conversation.sessionId)
    .slice(0, 3)
    .reverse();
  const before = [...ui.messages.children];
  for (const past of earlier) {
    const session = await api(`/widget/v1/sessions/${encodeURIComponent(past.id)}`, { token: past.visitorToken });
    divider(text.earlier);
    for (const message of session.messages) render(message, { earlier: true });
  }
  ui.messages.append(...before);
}

async function startChat(event) {
  event.preventDefault();
  const question = ui.question.value.trim();
  if (!question) return;
  const body = { widgetKey, visitorName: ui.name.value.trim() || undefined, visitorEmail: ui.email.value.trim() || undefined };
  if (identityToken) body.identityToken = identityToken;
  if (customFields) body.customFields = customFields;
  try {
    const session = await api('/widget/v1/sessions', { method: 'POST', body });
    // The chat started without them: tell the page's developer, not the visitor.
    if (session.ignoredCustomFields?.length) {
      console.warn(
        `Supportdesk: setCustomFields() ignored ${session.ignoredCustomFields.join(', ')}: only agents may set these fields (mark them visitor-writable to let the page set them)`,
      );
    }
    conversation = { sessionId: session.id, token: session.visitorToken, expiresAt: session.visitorTokenExpiresAt };
    save(conversation);
    keepFresh();
    showChat();
    if (session.visitor?.verified) await showEarlier().catch(() => {});
    if (session.emailVerified === false) ui.note.textContent = text.confirmEmail;
    connect();
    const waitOpen = setInterval(() => {
      if (send(question)) clearInterval(waitOpen);
    }, 200);
  } catch (err) {
    ui.note.textContent = err.message;
  }
}

window.addEventListener('message', (event) => {
  // Only the page that embeds us, from the origin the loader named.
  if (!parentOrigin || event.source !== window.parent || event.origin !== parentOrigin) return;
  const data = event.data;
  if (!data || data.sd !== 1) return;
  if (data.type === 'open') (conversation ? ui.input : ui.question).focus();
  else if (data.type === 'identify' && typeof data.token === 'string') identityToken = data.token;
  else if (data.type === 'customFields' && data.fields && typeof data.fields === 'object') customFields = data.fields;
});

async function boot() {
  text = await fetch(`locales/${locale}.json`).then((r) => r.json());
  document.documentElement.lang = locale;
  for (const node of document.querySelectorAll('[data-text]')) node.textContent = text[node.dataset.text];
  for (const node of document.querySelectorAll('[data-label]')) node.setAttribute('aria-label', text[node.dataset.label]);
  const colour = params.get('colour');
  if (/^#[0-9a-fA-F]{3,8}$/.test(colour ?? '')) document.documentElement.style.setProperty('--sd-colour', colour);
  const greeting = params.get('greeting');
  if (greeting) {
    ui.greeting.textContent = greeting;
    ui.greeting.hidden = false;
  }
  $('close').addEventListener('click', () => tell('close'));
  ui.start.addEventListener('submit', startChat);
  ui.composer.addEventListener('submit', (event) => {
    event.preventDefault();
    const body = ui.input.value.trim() || pendingFilesLabel();
    if (body && send(body)) ui.input.value = '';
  });
  setUpAttachments();
  if (linkToken) {
    try {
      await exchangeLink(linkToken);
    } catch (err) {
      ui.note.textContent = err.message;
    }
  }
  if (conversation) await resume();
  else ui.start.hidden = false;
  tell('ready');
}

// Files: the paperclip button or a drop on the chat uploads them with the
// visitor token; they go with the next message (named by their ids), and
// every message shows its files: images as thumbnails, others as chips,
// both opening the signed link the message carries.

/** Uploads waiting for the next message: { id, filename }. */
const pendingFiles = [];

function setUpAttachments() {
  const picker = $('file');
  $('attach').addEventListener('click', () => picker.click());
  picker.addEventListener('change', () => {
    uploadFiles([...picker.files]);
    picker.value = '';
  });
  for (const zone of [ui.messages, ui.composer]) {
    zone.addEventListener('dragover', (event) => {
      if (!conversation || ui.composer.hidden) return;
      event.preventDefault();
      ui.composer.classList.add('dropping');
    });
    zone.addEventListener('dragleave', () => ui.composer.classList.remove('dropping'));
    zone.addEventListener('drop', (event) => {
      event.preventDefault();
      ui.composer.classList.remove('dropping');
      if (conversation && !ui.composer.hidden) uploadFiles([...(event.dataTransfer?.files ?? [])]);
    });
  }
}

async function uploadFiles(files) {
  for (const file of files) {
    ui.note.textContent = text.uploading;
    try {
      const response = await fetch(`/widget/v1/attachments?filename=${encodeURIComponent(file.name)}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${conversation.token}`, 'Content-Type': file.type || 'application/octet-stream' },
        body: file,
        credentials: 'omit',
        cache: 'no-store',
      });
      const data = await response.json().catch(() => null);
      if (!response.ok) throw new Error(data?.error ?? text.failed);
      pendingFiles.push({ id: data.id, filename: data.filename });
      ui.note.textContent = '';
    } catch (err) {
      ui.note.textContent = err.message;
    }
  }
  showPendingFiles();
}

function showPendingFiles() {
  const list = $('pending');
  list.replaceChildren(
    ...pendingFiles.map((file) => {
      const chip = document.createElement('li');
      chip.className = 'chip';
      chip.textContent = file.filename;
      return chip;
    }),
  );
  list.hidden = pendingFiles.length === 0;
}

/** The body of a message that only carries files. */
function pendingFilesLabel() {
  return pendingFiles.map((file) => file.filename).join(', ');
}

/** The pending uploads' ids, for the message being sent. */
function takePendingFiles() {
  const ids = pendingFiles.splice(0).map((file) => file.id);
  showPendingFiles();
  return ids;
}

function showAttachments(li, attachments) {
  if (!Array.isArray(attachments) || attachments.length === 0) return;
  const box = document.createElement('span');
  box.className = 'files';
  for (const file of attachments) {
    const link = document.createElement('a');
    link.href = file.url;
    link.target = '_blank';
    link.rel = 'noopener';
    if (/^image\/(png|jpeg|gif|webp)$/.test(file.contentType)) {
      const img = document.createElement('img');
      img.className = 'thumb';
      img.src = file.url;
      img.alt = file.filename;
      link.append(img);
    } else {
      link.className = 'chip';
      link.textContent = file.filename;
    }
    box.append(link);
  }
  li.append(box);
}

boot();
