// HTTP helpers: JSON in, JSON out, errors in the service's shape
// ({error, code, status, details?}) thrown as ApiError.

export class ApiError extends Error {
  constructor(status, code, message, details = []) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/**
 * Calls the service. The agent console is signed in by its session cookie
 * (`cookie`: same origin) and passes `csrf`, the token every change carries;
 * the visitor widget passes its session's `token`. No API key is ever sent
 * from a browser.
 */
export async function request(path, { method = 'GET', body, cookie = false, csrf, token, keepalive = false, signal, ifMatch } = {}) {
  const headers = { Accept: 'application/json' };
  // The version a change is based on: a newer one answers 412 with what changed.
  if (ifMatch !== undefined) headers['If-Match'] = `"${ifMatch}"`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (csrf && method !== 'GET' && method !== 'HEAD') headers['X-CSRF-Token'] = csrf;
  // A visitor token (the widget's own session), never an API key.
  if (token) headers.Authorization = `Bearer ${token}`;
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      keepalive,
      signal,
      // The console's session cookie; the widget's calls carry none.
      credentials: cookie ? 'same-origin' : 'omit',
      cache: 'no-store',
    });
  } catch (err) {
    if (err?.name === 'AbortError') throw err;
    throw new ApiError(0, 'network', 'Cannot reach the service. Check your connection.');
  }
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!response.ok) {
    const message = data?.error ?? `Request failed (${response.status})`;
    const error = new ApiError(response.status, data?.code ?? 'http_error', message, data?.details ?? []);
    error.retryAfter = Number(response.headers.get('Retry-After')) || null;
    // The whole answer: a version conflict names the changes and the version now.
    error.body = data;
    throw error;
  }
  return data;
}

/** The `data` array of a list response, or the response if it is an array. */
export function listOf(response) {
  if (Array.isArray(response)) return response;
  if (Array.isArray(response?.data)) return response.data;
  return [];
}

/** The same origin's socket URL for a path such as `/api/v1/ws?token=…`. */
export function socketUrl(pathAndQuery) {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}${pathAndQuery}`;
}
