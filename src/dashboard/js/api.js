// The dashboard's only way to the server: kiln's public HTTP API (the same routes the CLI's
// operators and scripts use). Requests go to this origin only.

/** An error answer of the API: `code` and `message` from kiln's error envelope. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function request(method, path, body) {
  const init = { method, headers: { accept: 'application/json' } };
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
  if (!response.ok) throw new ApiError(response.status, json?.code ?? 'HTTP_ERROR', json?.message ?? response.statusText);
  return json;
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
