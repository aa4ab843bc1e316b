// Signing in with an API token. The token lives in this tab's sessionStorage (gone when the tab
// closes, never sent to another origin) and goes out as `Authorization: Bearer` on every API
// call (api.js). A 401 from any call brings the sign-in form back (main.js listens for it).
import { h, replace } from './dom.js';

const STORAGE_KEY = 'kiln.token';

/** The event api.js fires on a 401: the token is missing, unknown, expired or revoked. */
export const UNAUTHENTICATED_EVENT = 'kiln:unauthenticated';

/** The stored token, or null. */
export function storedToken() {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

/** Stores `token` (null: forgets it). */
export function storeToken(token) {
  if (token) sessionStorage.setItem(STORAGE_KEY, token);
  else sessionStorage.removeItem(STORAGE_KEY);
}

/**
 * Shows the sign-in form in `container` with `message` (why it is shown). `check(token)` asks
 * the server with the token and resolves, or rejects with the API's error; on success the token is
 * stored and `onSignedIn()` called.
 */
export function showSignIn(container, { message, check, onSignedIn }) {
  const input = h('input', { type: 'password', name: 'token', id: 'sign-in-token', autocomplete: 'off', spellcheck: 'false', placeholder: 'kiln_…', required: true });
  const error = h('p', { class: 'sign-in-error', role: 'alert', id: 'sign-in-error' });
  const submit = h('button', { type: 'submit', class: 'button primary', 'data-action': 'sign-in' }, 'Sign in');
  const form = h(
    'form',
    { class: 'sign-in', id: 'sign-in', 'aria-labelledby': 'sign-in-title' },
    h('h2', { id: 'sign-in-title' }, 'Sign in'),
    h('p', { class: 'muted' }, message),
    h('label', { class: 'field', for: 'sign-in-token' }, 'API token', input),
    h('p', { class: 'muted small' }, 'Create one with ', h('code', {}, 'kiln tokens create --tenant <tenant> --scopes read,operate'), '. It is kept in this tab only.'),
    error,
    h('div', { class: 'dialog-actions' }, submit),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const token = input.value.trim();
    if (!token) return;
    submit.disabled = true;
    replace(error);
    try {
      await check(token);
      storeToken(token);
      onSignedIn();
    } catch (err) {
      replace(error, err.status === 401 ? 'This token is not accepted (unknown, expired or revoked).' : err.message);
      submit.disabled = false;
    }
  });
  replace(container, form);
  input.focus();
}
