/**
 * Which store a process opens. Each source (file < env < flags) may select one: a PostgreSQL URL
 * (`store.url`, `KILN_STORE`, `--store`) or a SQLite file (`store.path`, `KILN_DB`, `--db`,
 * `sqlite:<path>` specs); the highest source that selects one wins, so `--db x.db` overrides a
 * `store.url` in kiln.yaml. Within one source a store is named once: naming two is an issue,
 * not a silent precedence rule nobody remembers.
 */
import type { ConfigIssue } from '../core/errors.ts';
import type { ConfigFile } from './config-file.ts';
import { DEFAULT_PG_SCHEMA, StoreKind, type ResolvedStore } from './schema.ts';
import { looksLikePostgresUrl, parseStoreSpec, postgresUrlProblem } from './store-url.ts';

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
    const what = parsed.kind === StoreKind.postgres ? 'selects PostgreSQL' : 'names a SQLite file';
    return report(`${what} but ${names.path} names a SQLite file too; set only one of ${names.spec} and ${names.path}`);
  }
  return parsed.kind === StoreKind.postgres
    ? { ...fields, kind: StoreKind.postgres, url: parsed.url }
    : { ...fields, kind: StoreKind.sqlite, path: parsed.path };
}

/**
 * Combinations within kiln.yaml's `store` mapping that cannot mean anything: a url and a path,
 * a `kind` contradicting them, a `schema` for SQLite, a URL that does not parse. Each issue
 * carries the line of the offending key.
 */
export function checkFileStore(file: ConfigFile): ConfigIssue[] {
  const store = file.value['store'];
  if (typeof store !== 'object' || store === null) return [];
  const { kind, path, url, schema } = store as Record<string, unknown>;
  const issues: ConfigIssue[] = [];
  const report = (key: string, message: string): void => {
    issues.push({ source: file.source, path: `store.${key}`, ...file.positionOf(['store', key], 'key'), message });
  };
  if (url !== undefined && path !== undefined) {
    report('url', 'store.url (PostgreSQL) and store.path (SQLite) are both set; a store is one or the other');
  } else if (kind === StoreKind.sqlite && url !== undefined) {
    report('url', 'kind is sqlite but url selects PostgreSQL; remove one');
  } else if (kind === StoreKind.postgres && path !== undefined) {
    report('path', 'kind is postgres but path names a SQLite file; remove one');
  }
  const sqliteOnly = url === undefined && (path !== undefined || kind === StoreKind.sqlite);
  if (schema !== undefined && sqliteOnly) report('schema', 'schema applies to the postgres store only (set store.url)');
  // The pattern check already reported URLs that do not start like one; this catches the rest.
  if (typeof url === 'string' && looksLikePostgresUrl(url)) {
    const problem = postgresUrlProblem(url);
    if (problem !== undefined) report('url', problem);
  }
  return issues;
}

/**
 * The store selected by `layers` (defaults first, flags last): the kind of the highest layer
 * that selects one (explicit `kind`, else `url` means postgres, else `path` means sqlite), with
 * the highest `url`/`path`/`schema` set anywhere. Null when postgres is selected without any URL.
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
    const selected = fields['kind'] ?? (fields['url'] !== undefined ? StoreKind.postgres : fields['path'] !== undefined ? StoreKind.sqlite : undefined);
    if (selected === StoreKind.sqlite || selected === StoreKind.postgres) kind = selected;
  }
  if (kind === StoreKind.postgres) return url === undefined ? null : { kind, url, schema };
  // The defaults layer always has a path, so a SQLite selection always has one.
  return { kind, path: path ?? '' };
}
