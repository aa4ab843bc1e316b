/**
 * Store specs and URLs: parsing `--store` / `KILN_STORE` (`postgres://...` or `sqlite:<path>`),
 * checking PostgreSQL URLs, and redacting their passwords. A connection URL usually carries a
 * password, so every place that shows one (logs, errors, `kiln doctor`) goes through
 * {@link redactUrl} or {@link redactSecrets}.
 */
import type { ResolvedStore } from './schema.ts';

/** Prefix of a SQLite store spec: `sqlite:./kiln.db`, `sqlite:/var/lib/kiln.db`, `sqlite::memory:`. */
export const SQLITE_SPEC_PREFIX = 'sqlite:';

/** What the text of one store spec selects, or why it is not one. */
export type StoreSpec = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string } | { kind: 'invalid'; problem: string };

const POSTGRES_PROTOCOLS = new Set(['postgres:', 'postgresql:']);
const MASK = '***';

/** True when `text` starts like a PostgreSQL connection URL. */
export function looksLikePostgresUrl(text: string): boolean {
  return /^postgres(ql)?:\/\//i.test(text);
}

/** Why `url` is not a usable PostgreSQL URL (the URL itself redacted), or undefined when it is. */
export function postgresUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `must be a postgres:// or postgresql:// URL, got an unparseable value ${redactUrl(url)}`;
  }
  if (!POSTGRES_PROTOCOLS.has(parsed.protocol.toLowerCase())) {
    return `must be a postgres:// or postgresql:// URL, got ${redactUrl(url)}`;
  }
  // A host-less URL would silently mean "the local socket", which is rarely what was meant;
  // a socket directory is given explicitly as `?host=/var/run/postgresql`.
  if (parsed.hostname === '' && !parsed.searchParams.has('host')) return `must name a host (postgres://user@host:5432/db), got ${redactUrl(url)}`;
  return undefined;
}

/**
 * Parses a store spec: a PostgreSQL URL, or `sqlite:` followed by a file path (relative paths are
 * the caller's to resolve). Anything else, including a bare path, is `invalid`: one explicit form
 * per store keeps `--store` unambiguous.
 */
export function parseStoreSpec(spec: string): StoreSpec {
  const text = spec.trim();
  if (text.toLowerCase().startsWith(SQLITE_SPEC_PREFIX)) {
    const path = text.slice(SQLITE_SPEC_PREFIX.length);
    if (path === '') return { kind: 'invalid', problem: 'sqlite: needs a file path, e.g. sqlite:./kiln.db' };
    return { kind: 'sqlite', path };
  }
  if (looksLikePostgresUrl(text)) {
    const problem = postgresUrlProblem(text);
    return problem === undefined ? { kind: 'postgres', url: text } : { kind: 'invalid', problem };
  }
  return { kind: 'invalid', problem: `must be a postgres:// URL or sqlite:<path>, got ${redactUrl(text)}` };
}

/**
 * `url` with its password (and any `password` query parameter) replaced by `***`. Text that does
 * not parse as a URL still has a `user:password@` part masked.
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url.replace(/(\/\/[^/:@\s]*:)[^@\s]*@/, `$1${MASK}@`);
  }
  if (parsed.password !== '') parsed.password = MASK;
  if (parsed.searchParams.has('password')) parsed.searchParams.set('password', MASK);
  return parsed.toString();
}

/**
 * `text` (e.g. a driver's error message) with every occurrence of `url`'s password masked, in
 * case a driver echoes its connection string.
 */
export function redactSecrets(text: string, url: string): string {
  const secrets = new Set<string>();
  try {
    const parsed = new URL(url);
    for (const raw of [parsed.password, parsed.searchParams.get('password') ?? '']) {
      if (raw === '') continue;
      secrets.add(raw);
      secrets.add(decodeURIComponent(raw));
    }
  } catch {
    // An unparseable URL has no password we could find; the URL itself is masked below.
  }
  let out = text.replaceAll(url, redactUrl(url));
  // Longest first, so a password that contains another one is masked whole.
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) out = out.replaceAll(secret, MASK);
  return out;
}

/** The store for humans and logs, never with a password: `sqlite /path/kiln.db`, `postgres postgres://u:***@h/db (schema kiln)`. */
export function describeStore(store: ResolvedStore): string {
  return store.kind === 'sqlite' ? `sqlite ${store.path}` : `postgres ${redactUrl(store.url)} (schema ${store.schema})`;
}
