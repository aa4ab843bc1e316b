/**
 * Which store a process opens. Each source (file < env < flags) may select one: a PostgreSQL or
 * Redis URL (`store.url`, `KILN_STORE`, `--store`) or a SQLite file (`store.path`, `KILN_DB`,
 * `--db`, `sqlite:<path>` specs); the highest source that selects one wins, so `--db x.db`
 * overrides a `store.url` in kiln.yaml. Within one source a store is named once: naming two is
 * an issue, not a silent precedence rule nobody remembers.
 */
import type { ConfigIssue } from '../core/errors.ts';
import type { ConfigFile } from './config-file.ts';
import { DEFAULT_PG_SCHEMA, StoreKind, type ResolvedStore } from './schema.ts';
import { looksLikePostgresUrl, looksLikeRedisUrl, parseStoreSpec, postgresUrlProblem, redisUrlProblem, splitRedisUrl } from './store-url.ts';

/** How a store's name reads in messages. */
const STORE_TITLE: Readonly<Record<StoreKind, string>> = { sqlite: 'SQLite', postgres: 'PostgreSQL', redis: 'Redis' };

/** The store a connection URL selects by its scheme (anything not redis:// is taken for PostgreSQL). */
function urlKind(url: string): typeof StoreKind.postgres | typeof StoreKind.redis {
  return looksLikeRedisUrl(url) ? StoreKind.redis : StoreKind.postgres;
}

/** The `store` fields one source set (`kind`, `path`, `url`, `schema`), values already checked. */
export type StoreFields = Readonly<Record<string, unknown>>;

/** How one env/flag source names its store spec and its SQLite path. */
export interface StoreSpecNames {
  source: 'env' | 'flags';
  /** `KILN_STORE` or `--store`. */
  spec: string;
  /** `KILN_DB` or `--db`, which the spec may not be combined with. */
  path: string;
}

/**
 * Applies a store spec to the `store` fields of one env/flag source and returns the new fields;
 * an invalid spec or one combined with a SQLite path of the same source is reported instead.
 */
export function applyStoreSpec(fields: StoreFields, spec: string, names: StoreSpecNames, issues: ConfigIssue[]): StoreFields {
  const parsed = parseStoreSpec(spec);
  const report = (message: string): StoreFields => {
    issues.push({ source: names.source, path: names.spec, message });
    return fields;
  };
  if (parsed.kind === 'invalid') return report(parsed.problem);
  if (fields['path'] !== undefined) {
    const what = parsed.kind === StoreKind.sqlite ? 'names a SQLite file' : `selects ${STORE_TITLE[parsed.kind]}`;
    return report(`${what} but ${names.path} names a SQLite file too; set only one of ${names.spec} and ${names.path}`);
  }
  return parsed.kind === StoreKind.sqlite ? { ...fields, kind: StoreKind.sqlite, path: parsed.path } : { ...fields, kind: parsed.kind, url: parsed.url };
}

/**
 * Combinations within kiln.yaml's `store` mapping that cannot mean anything: a url and a path,
 * a `kind` contradicting them, a `schema` for SQLite or Redis, a URL that does not parse. Each
 * issue carries the line of the offending key.
 */
export function checkFileStore(file: ConfigFile): ConfigIssue[] {
  const store = file.value['store'];
  if (typeof store !== 'object' || store === null) return [];
  const { kind, path, url, schema } = store as Record<string, unknown>;
  const issues: ConfigIssue[] = [];
  const report = (key: string, message: string): void => {
    issues.push({ source: file.source, path: `store.${key}`, ...file.positionOf(['store', key], 'key'), message });
  };
  const fromUrl = typeof url === 'string' ? urlKind(url) : undefined;
  if (url !== undefined && path !== undefined) {
    report('url', `store.url (${STORE_TITLE[fromUrl ?? StoreKind.postgres]}) and store.path (SQLite) are both set; a store is one or the other`);
  } else if (fromUrl !== undefined && typeof kind === 'string' && kind !== fromUrl && kind in STORE_TITLE) {
    report('url', `kind is ${kind} but url selects ${STORE_TITLE[fromUrl]}; remove one`);
  } else if (kind !== undefined && kind !== StoreKind.sqlite && path !== undefined) {
    report('path', `kind is ${String(kind)} but path names a SQLite file; remove one`);
  }
  const selected = kind ?? fromUrl ?? (path !== undefined ? StoreKind.sqlite : undefined);
  if (schema !== undefined && (selected === StoreKind.sqlite || selected === StoreKind.redis)) {
    report('schema', `schema applies to the postgres store only (${selected === StoreKind.redis ? "a Redis store is named by the URL's ?name=" : 'set store.url'})`);
  }
  // The pattern check already reported URLs that do not start like one; this catches the rest.
  if (typeof url === 'string') {
    const problem = looksLikePostgresUrl(url) ? postgresUrlProblem(url) : looksLikeRedisUrl(url) ? redisUrlProblem(url) : undefined;
    if (problem !== undefined) report('url', problem);
  }
  return issues;
}

/**
 * The store selected by `layers` (defaults first, flags last): the kind of the highest layer
 * that selects one (explicit `kind`, else `url` means postgres or redis by its scheme, else
 * `path` means sqlite), with the highest `url`/`path`/`schema` set anywhere. Null when postgres
 * or redis is selected without any URL, or with a URL of the other one (both already reported
 * when they came from one source).
 */
export function resolveStore(layers: readonly (StoreFields | undefined)[]): ResolvedStore | null {
  let kind: StoreKind = StoreKind.sqlite;
  let path: string | undefined;
  let url: string | undefined;
  let schema = DEFAULT_PG_SCHEMA;
  for (const fields of layers) {
    if (!fields) continue;
    if (typeof fields['path'] === 'string') path = fields['path'];
    if (typeof fields['url'] === 'string') url = fields['url'];
    if (typeof fields['schema'] === 'string') schema = fields['schema'];
    const selected = fields['kind'] ?? (typeof fields['url'] === 'string' ? urlKind(fields['url']) : fields['path'] !== undefined ? StoreKind.sqlite : undefined);
    if (selected === StoreKind.sqlite || selected === StoreKind.postgres || selected === StoreKind.redis) kind = selected;
  }
  // The defaults layer always has a path, so a SQLite selection always has one.
  if (kind === StoreKind.sqlite) return { kind, path: path ?? '' };
  if (url === undefined || urlKind(url) !== kind) return null;
  return kind === StoreKind.postgres ? { kind, url, schema } : { kind, ...splitRedisUrl(url) };
}
