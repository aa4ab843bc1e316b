/**
 * `worker.lock` of `kiln.yaml`: where stage locks are kept and their default TTL. Locks are kept
 * by the store itself (its `locks` sub-port), so the only provider that works is the selected
 * store's own (`redis` once the Redis store is selected); naming another is a configuration
 * error that says which providers exist and how to select the store that keeps them.
 */
import type { ConfigIssue } from '../core/errors.ts';
import { DEFAULT_LOCK_TTL_MS } from '../core/policy/stage-policy.ts';
import type { ConfigFile } from './config-file.ts';
import { LockProvider, type ResolvedConfig, type ResolvedStore } from './schema.ts';
import { isPlainObject } from './validate.ts';

/** The resolved `worker.lock`. */
export type ResolvedLockSettings = ResolvedConfig['worker']['lock'];

const PROVIDERS: readonly string[] = Object.values(LockProvider);
const PROVIDER_LIST = `store (the selected store), or its own kind: ${PROVIDERS.join(', ')}`;

/** How to select the store that keeps a provider's locks (memory is for tests, not selectable). */
const SELECT_HINT: Readonly<Record<string, string>> = {
  redis: ' (select the Redis store with store.url, KILN_STORE or --store redis://host:6379)',
  postgres: ' (select the PostgreSQL store with store.url, KILN_STORE or --store postgres://...)',
  sqlite: ' (select the SQLite store with store.path, KILN_DB or --db)',
};

/** Why `provider` cannot be used with the selected store, or undefined when it can. */
function providerProblem(provider: string, store: ResolvedStore): string | undefined {
  if (provider === 'store' || provider === store.kind) return undefined;
  if (!PROVIDERS.includes(provider)) return `unknown lock provider "${provider}"; providers: ${PROVIDER_LIST}`;
  const hint = SELECT_HINT[provider] ?? '';
  return `lock provider ${provider} is not the selected store (${store.kind}): locks are kept by the store${hint}; use ${store.kind} or leave provider out`;
}

/**
 * Resolves the merged `worker.lock` fields (`provider`, `ttl` in ms) against the selected store;
 * a provider other than the store's own is reported into `issues` with the file's line.
 */
export function resolveLockSettings(raw: unknown, store: ResolvedStore, file: ConfigFile | null, issues: ConfigIssue[]): ResolvedLockSettings {
  const fields = isPlainObject(raw) ? raw : {};
  const ttlMs = typeof fields['ttl'] === 'number' ? fields['ttl'] : DEFAULT_LOCK_TTL_MS;
  const provider = fields['provider'];
  if (typeof provider === 'string') {
    const problem = providerProblem(provider, store);
    if (problem !== undefined) {
      issues.push({ source: file?.source ?? 'file', path: 'worker.lock.provider', ...file?.positionOf(['worker', 'lock', 'provider']), message: problem });
    }
  }
  return { provider: store.kind, ttlMs };
}
