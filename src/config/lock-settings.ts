/**
 * `worker.lock` of `kiln.yaml`: where stage locks are kept and their default TTL. Locks are kept
 * by the store itself (its `locks` sub-port), so the only provider that works is the selected
 * store's own; naming another, or one that does not exist yet (redis), is a configuration error
 * that says which providers exist.
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

/** Why `provider` cannot be used with the selected store, or undefined when it can. */
function providerProblem(provider: string, store: ResolvedStore): string | undefined {
  if (provider === 'store' || provider === store.kind) return undefined;
  if (provider === 'redis') {
    return `lock provider "redis" is not available yet: locks are kept by the store, and the Redis store is not built yet; providers: ${PROVIDER_LIST}. Use ${store.kind} (this configuration's store) or leave provider out`;
  }
  if (!PROVIDERS.includes(provider)) return `unknown lock provider "${provider}"; providers: ${PROVIDER_LIST}`;
  return `lock provider ${provider} is not the selected store (${store.kind}): locks are kept by the store; use ${store.kind} or leave provider out`;
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
