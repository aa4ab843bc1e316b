// The dashboard's only way to the server: kiln's public HTTP API (the same routes the CLI's
// operators and scripts use). Requests go to this origin only, with the signed-in API token (if
// any) as `Authorization: Bearer`; a 401 fires the sign-in event (see sign-in.js).
import { storedToken, UNAUTHENTICATED_EVENT } from './sign-in.js';

/** An error answer of the API: `code` and `message` from kiln's error envelope. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function request(method, path, body, token = storedToken()) {
  const init = { method, headers: { accept: 'application/json' } };
  if (token) init.headers.authorization = `Bearer ${token}`;
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    throw new ApiError(0, 'NETWORK', 'the kiln server does not answer');
  }
  const text = await response.text();
  const json = text === '' ? null : JSON.parse(text);
  if (!response.ok) {
    const error = new ApiError(response.status, json?.code ?? 'HTTP_ERROR', json?.message ?? response.statusText);
    if (response.status === 401) window.dispatchEvent(new CustomEvent(UNAUTHENTICATED_EVENT, { detail: error }));
    throw error;
  }
  return json;
}

/** `GET path` with `token` instead of the stored one (the sign-in form's check); no sign-in event. */
export async function getWith(token, path) {
  const init = { headers: { accept: 'application/json', authorization: `Bearer ${token}` } };
  const response = await fetch(path, init);
  const json = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, json?.code ?? 'HTTP_ERROR', json?.message ?? response.statusText);
  return json;
}

/**
 * Opens an API resource (an artifact link) the browser cannot fetch with the token by itself: the
 * bytes are fetched with it and saved as a download (never rendered in this origin).
 */
export async function download(path, filename) {
  const token = storedToken();
  const response = await fetch(path, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  if (!response.ok) throw new ApiError(response.status, 'HTTP_ERROR', `${path}: ${response.status}`);
  const url = URL.createObjectURL(await response.blob());
  const link = Object.assign(document.createElement('a'), { href: url, download: filename });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** `GET path` (with query parameters; empty values are left out). */
export function get(path, query = {}) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  const qs = params.toString();
  return request('GET', qs ? `${path}?${qs}` : path);
}

/** `POST path` with an optional JSON body. */
export function post(path, body) {
  return request('POST', path, body);
}

/** The path segment of an id or queue name. */
export function seg(value) {
  return encodeURIComponent(value);
}
