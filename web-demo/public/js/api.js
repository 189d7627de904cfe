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
 * Calls the service. `key` (agent console only) goes in the X-API-Key
 * header; the visitor widget never has one, only its session's `token`.
 */
export async function request(path, { method = 'GET', body, key, token, keepalive = false, signal } = {}) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (key) headers['X-API-Key'] = key;
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
      credentials: 'omit',
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
