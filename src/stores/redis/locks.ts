/**
 * The `locks` sub-port of the Redis store: named locks in `lock:<key>` hashes with the `locks`
 * zset scored by expiry (lib-keys.lua), each method one script (routines/locks-*.lua). `acquire`
 * checks and takes the key in one script, so of any number of acquirers in any number of
 * processes one at a time holds it; its fence comes from next_fence(), shared with job and
 * cache builder fences. jobs-commit reads a lock's `fence` field to fence publications.
 */
import type { Lock, LockAcquireRequest, LockAcquireResult, LockReleaseStatus, LockRenewal, LockRenewStatus, LocksPort, LockStats } from '../../core/ports/locks.ts';
import { clampLockListLimit } from '../shared/lock-listing.ts';
import { wholeMs } from './cache.ts';
import type { RedisContext } from './context.ts';
import { fieldsOf, listOf, required, requiredNumber, type FlatHash } from './rows.ts';

/** The stored lock on `key` (flat HGETALL) as a {@link Lock}, without its token. */
function lockFrom(key: string, flat: FlatHash): Lock {
  const f = fieldsOf(flat);
  return {
    key,
    owner: required(f, 'owner'),
    fence: requiredNumber(f, 'fence'),
    acquiredAt: requiredNumber(f, 'acquiredAt'),
    expiresAt: requiredNumber(f, 'expiresAt'),
  };
}

/** Takes `key` when free, expired or already the caller's (see `LocksPort.acquire`). */
async function acquireLock(ctx: RedisContext, request: LockAcquireRequest): Promise<LockAcquireResult> {
  const [acquired, flat] = await ctx.call<[boolean, FlatHash]>('locks-acquire', [request.key, request.owner, request.token, wholeMs(request.ttlMs)]);
  const lock = lockFrom(request.key, flat);
  return acquired ? { status: 'acquired', lock } : { status: 'held', holder: lock };
}

/** Extends each lock its token still holds live, in input order. */
async function renewLocks(ctx: RedisContext, renewals: readonly LockRenewal[]): Promise<LockRenewStatus[]> {
  if (renewals.length === 0) return [];
  const args = renewals.flatMap((r) => [r.key, r.token, wholeMs(r.ttlMs)]);
  const expiries = await ctx.call<string[]>('locks-renew', args);
  return expiries.map((expiresAt): LockRenewStatus => (expiresAt === '' ? { status: 'lost' } : { status: 'renewed', expiresAt: Number(expiresAt) }));
}

/** Counts at the store's now. */
async function lockStats(ctx: RedisContext): Promise<LockStats> {
  const [held, expired, oldest] = await ctx.call<[string, string, string]>('locks-stats');
  return { held: Number(held), expired: Number(expired), oldestHeldAgeMs: Number(oldest) };
}

/** Named locks on Redis. */
export function createLocksPort(ctx: RedisContext): LocksPort {
  return ctx.port<LocksPort>({
    acquire: (request) => acquireLock(ctx, request),
    renew: (renewals) => renewLocks(ctx, renewals),
    release: (key, token) => ctx.call<LockReleaseStatus>('locks-release', [key, token]),
    get: async (key) => {
      const flat = await ctx.call<FlatHash | null>('locks-get', [key]);
      return flat === null ? null : lockFrom(key, flat);
    },
    list: async (query = {}) => {
      const pairs = await ctx.call<[string, FlatHash][] | Record<string, never>>('locks-list', [clampLockListLimit(query.limit)]);
      return listOf(pairs).map(([key, flat]) => lockFrom(key, flat));
    },
    stats: () => lockStats(ctx),
    reap: async () => Number(await ctx.call<string>('locks-reap')),
  });
}
