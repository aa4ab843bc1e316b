// The dashboard's shell: hash routing between the views, the 2-second refresh loop (paused while
// the tab is hidden), and the live indicator. Every view is `view(container, ctx)` returning
// `{ refresh(): Promise<void>, unmount?(): void }`; the shell calls `refresh` on mount and then
// every POLL_MS after the previous refresh finished.
import { download, get, getWith } from './api.js';
import { toast } from './dialog.js';
import { showSignIn, storedToken, storeToken, UNAUTHENTICATED_EVENT } from './sign-in.js';
import { cacheView } from './views/cache.js';
import { deadLettersView } from './views/dead-letters.js';
import { queuesView } from './views/queues.js';
import { runView } from './views/run.js';
import { runsView } from './views/runs.js';

/** Live updates: one refresh every 2 s at most. */
const POLL_MS = 2_000;

const ROUTES = [
  { pattern: /^\/queues$/, view: queuesView, nav: 'queues', title: 'Queues' },
  { pattern: /^\/runs$/, view: runsView, nav: 'runs', title: 'Runs' },
  { pattern: /^\/runs\/([^/]+)$/, view: runView, nav: 'runs', title: 'Run' },
  { pattern: /^\/dead-letters$/, view: deadLettersView, nav: 'dead-letters', title: 'Dead letters' },
  { pattern: /^\/cache$/, view: cacheView, nav: 'cache', title: 'Cache' },
];

let mounted = null;
let generation = 0;
let timer = null;

function parseHash() {
  let raw = location.hash.slice(1);
  try {
    raw = decodeURI(raw);
  } catch {
    // A hand-typed address with a stray %: take it as it is.
  }
  raw ||= '/queues';
  const [path, query = ''] = raw.split('?');
  return { path, params: new URLSearchParams(query) };
}

function setLive(ok, detail) {
  const live = document.getElementById('live');
  live.className = `live ${ok ? 'live-ok' : 'live-error'}`;
  live.textContent = ok ? `Live · ${new Date().toLocaleTimeString(undefined, { hour12: false })}` : `Offline · ${detail}`;
}

/** Refreshes the mounted view, then schedules the next refresh (unless the view changed meanwhile). */
async function tick(gen) {
  clearTimeout(timer);
  if (gen !== generation || !mounted) return;
  try {
    await mounted.refresh();
    if (gen === generation) setLive(true);
  } catch (err) {
    if (gen === generation) setLive(false, err.message);
  }
  if (gen === generation && !document.hidden) timer = setTimeout(() => tick(gen), POLL_MS);
}

/** Shows the sign-in form instead of the view; the refresh loop stops until a token is accepted. */
function signIn(message) {
  mounted?.unmount?.();
  mounted = null;
  generation += 1;
  clearTimeout(timer);
  document.getElementById('sign-out').hidden = true;
  setLive(false, 'signed out');
  showSignIn(document.getElementById('view'), {
    message,
    check: (token) => getWith(token, '/v1/queues'),
    onSignedIn: () => {
      document.getElementById('sign-out').hidden = false;
      mount();
    },
  });
}

function mount() {
  document.getElementById('sign-out').hidden = storedToken() === null;
  const { path, params } = parseHash();
  const route = ROUTES.find((r) => r.pattern.test(path));
  if (!route) {
    location.replace('#/queues');
    return;
  }
  mounted?.unmount?.();
  generation += 1;
  const gen = generation;
  for (const a of document.querySelectorAll('[data-nav]')) a.classList.toggle('active', a.dataset.nav === route.nav);
  document.title = `${route.title} · kiln`;
  const container = document.getElementById('view');
  container.replaceChildren();
  // Reports of actions belong to the view they were taken on.
  document.getElementById('toasts')?.replaceChildren();
  const match = path.match(route.pattern);
  mounted = route.view(container, {
    params,
    id: match?.[1] ? decodeURIComponent(match[1]) : undefined,
    /** Rewrites the query part of the current route without remounting, then refreshes now. */
    setParams(next) {
      const query = new URLSearchParams([...next].filter(([, v]) => v !== ''));
      history.replaceState(null, '', `#${path}${query.size > 0 ? `?${query}` : ''}`);
      void tick(gen);
    },
    /** Refreshes now (after an action). */
    refreshNow: () => tick(gen),
  });
  void tick(gen);
}

document.addEventListener('visibilitychange', () => {
  if (!document.hidden) void tick(generation);
});
// Signed out, the sign-in form (and why it is there) stays until a sign-in: a link followed
// meanwhile must not mount a view that would only be refused again, and lose the reason.
window.addEventListener('hashchange', () => {
  if (!document.getElementById('sign-in')) mount();
});
window.addEventListener(UNAUTHENTICATED_EVENT, (event) => {
  if (document.getElementById('sign-in')) return;
  const hadToken = storedToken() !== null;
  storeToken(null);
  signIn(hadToken ? `The server refused the token: ${event.detail.message}. Sign in again.` : 'This kiln server asks for an API token.');
});
// With a token, links to API resources (artifacts) are fetched with it and saved.
document.addEventListener('click', (event) => {
  const link = event.target.closest?.('a[href^="/v1/"]');
  if (!link || storedToken() === null) return;
  event.preventDefault();
  download(link.getAttribute('href'), decodeURIComponent(link.getAttribute('href').split('/').pop()).replace(':', '-')).catch((err) => toast(err.message, 'error'));
});
window.addEventListener('DOMContentLoaded', () => {
  document.getElementById('sign-out').addEventListener('click', () => {
    storeToken(null);
    signIn('Signed out.');
  });
  mount();
  get('/healthz')
    .then((health) => {
      document.getElementById('store').textContent = `store: ${health.store}`;
    })
    .catch(() => {});
});
