/**
 * Store specs and URLs: parsing `--store` / `KILN_STORE` (`postgres://...`, `redis://...` or
 * `sqlite:<path>`), checking PostgreSQL and Redis URLs, and redacting their passwords. A
 * connection URL usually carries a password, so every place that shows one (logs, errors,
 * `kiln doctor`) goes through {@link redactUrl} or {@link redactSecrets}.
 */
import { DEFAULT_REDIS_STORE_NAME, StoreKind, type ResolvedStore } from './schema.ts';

/** Prefix of a SQLite store spec: `sqlite:./kiln.db`, `sqlite:/var/lib/kiln.db`, `sqlite::memory:`. */
export const SQLITE_SPEC_PREFIX = 'sqlite:';

/** What the text of one store spec selects, or why it is not one. */
export type StoreSpec =
  | { kind: 'sqlite'; path: string }
  | { kind: 'postgres'; url: string }
  | { kind: 'redis'; url: string }
  | { kind: 'invalid'; problem: string };

const POSTGRES_PROTOCOLS = new Set(['postgres:', 'postgresql:']);
const REDIS_PROTOCOLS = new Set(['redis:', 'rediss:']);
/** The query parameter of a Redis URL that names the store (its key space), not a driver option. */
const REDIS_NAME_PARAM = 'name';
/** A Redis store name: the `{...}` of its key prefix `kiln:{<name>}:` (the store checks it too). */
const REDIS_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;
const MASK = '***';

/** `url` parsed, or why it is not `what` (one of `protocols`), the URL itself redacted. */
function parseWithProtocol(url: string, protocols: ReadonlySet<string>, what: string): URL | string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `must be ${what}, got an unparseable value ${redactUrl(url)}`;
  }
  return protocols.has(parsed.protocol.toLowerCase()) ? parsed : `must be ${what}, got ${redactUrl(url)}`;
}

/** True when `text` starts like a PostgreSQL connection URL. */
export function looksLikePostgresUrl(text: string): boolean {
  return /^postgres(ql)?:\/\//i.test(text);
}

/** Why `url` is not a usable PostgreSQL URL (the URL itself redacted), or undefined when it is. */
export function postgresUrlProblem(url: string): string | undefined {
  const parsed = parseWithProtocol(url, POSTGRES_PROTOCOLS, 'a postgres:// or postgresql:// URL');
  if (typeof parsed === 'string') return parsed;
  // A host-less URL would silently mean "the local socket", which is rarely what was meant;
  // a socket directory is given explicitly as `?host=/var/run/postgresql`.
  if (parsed.hostname === '' && !parsed.searchParams.has('host')) return `must name a host (postgres://user@host:5432/db), got ${redactUrl(url)}`;
  return undefined;
}

/** True when `text` starts like a Redis connection URL (`redis://`, or `rediss://` for TLS). */
export function looksLikeRedisUrl(text: string): boolean {
  return /^rediss?:\/\//i.test(text);
}

/**
 * Why `url` is not a usable Redis URL (the URL itself redacted), or undefined when it is: it
 * names a host, its path is empty or a database number, and its `name` (if any) is a store name.
 */
export function redisUrlProblem(url: string): string | undefined {
  const parsed = parseWithProtocol(url, REDIS_PROTOCOLS, 'a redis:// or rediss:// URL');
  if (typeof parsed === 'string') return parsed;
  if (parsed.hostname === '') return `must name a host (redis://host:6379/0), got ${redactUrl(url)}`;
  if (!/^\/?(\d+)?$/.test(parsed.pathname)) return `the path of a Redis URL is a database number (redis://host:6379/0), got ${redactUrl(url)}`;
  const name = parsed.searchParams.get(REDIS_NAME_PARAM);
  if (name !== null && !REDIS_NAME_PATTERN.test(name)) {
    return `?name= is the store's name (1 to 64 of A-Z a-z 0-9 _ . -), got ${JSON.stringify(name)} in ${redactUrl(url)}`;
  }
  return undefined;
}

/**
 * A checked Redis URL split into the URL the driver gets (without `name`) and the store name
 * (`?name=`, default {@link DEFAULT_REDIS_STORE_NAME}).
 */
export function splitRedisUrl(url: string): { url: string; name: string } {
  const parsed = new URL(url);
  const name = parsed.searchParams.get(REDIS_NAME_PARAM) ?? DEFAULT_REDIS_STORE_NAME;
  if (!parsed.searchParams.has(REDIS_NAME_PARAM)) return { url, name };
  parsed.searchParams.delete(REDIS_NAME_PARAM);
  return { url: parsed.toString(), name };
}

/**
 * Parses a store spec: a PostgreSQL or Redis URL, or `sqlite:` followed by a file path (relative
 * paths are the caller's to resolve). Anything else, including a bare path, is `invalid`: one
 * explicit form per store keeps `--store` unambiguous.
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
  if (looksLikeRedisUrl(text)) {
    const problem = redisUrlProblem(text);
    return problem === undefined ? { kind: 'redis', url: text } : { kind: 'invalid', problem };
  }
  return { kind: 'invalid', problem: `must be a postgres:// or redis:// URL or sqlite:<path>, got ${redactUrl(text)}` };
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

/**
 * The store for humans and logs, never with a password: `sqlite /path/kiln.db`,
 * `postgres postgres://u:***@h/db (schema kiln)`, `redis redis://:***@h:6379/0 (name default)`.
 */
export function describeStore(store: ResolvedStore): string {
  switch (store.kind) {
    case StoreKind.sqlite:
      return `sqlite ${store.path}`;
    case StoreKind.postgres:
      return `postgres ${redactUrl(store.url)} (schema ${store.schema})`;
    case StoreKind.redis:
      return `redis ${redactUrl(store.url)} (name ${store.name})`;
  }
}

/** The connection URL of a networked store (for masking its password in messages); none for SQLite. */
export function storeUrl(store: ResolvedStore): string | undefined {
  return store.kind === StoreKind.sqlite ? undefined : store.url;
}
