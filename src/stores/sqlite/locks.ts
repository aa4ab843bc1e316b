/**
 * The `locks` sub-port of the SQLite store: each method is one transaction; those that write run
 * BEGIN IMMEDIATE, which holds the database write lock from before the read of the lock row until
 * after its write, so of any number of acquirers in any number of processes sharing the file one
 * at a time sees the key free and takes it, with a fence from the store's one sequence. The lock
 * check a completion's publications pass ({@link lockFenceIsCurrent}) is here too.
 */
import type { LockFence } from '../../core/ports/jobs.ts';
import type { Lock, LockAcquireRequest, LockAcquireResult, LockRenewal, LockRenewStatus, LockReleaseStatus, LocksPort, LockStats } from '../../core/ports/locks.ts';
import { clampLockListLimit } from '../shared/lock-listing.ts';
import type { SqliteContext } from './context.ts';
import { takeFence } from './jobs/leases.ts';
import { lockFromRow } from './rows.ts';

/** Takes `key` when free, expired or already the caller's (see `LocksPort.acquire`). */
function acquireLock(ctx: SqliteContext, request: LockAcquireRequest): LockAcquireResult {
  const now = ctx.clock.now();
  const sql = ctx.sql();
  const { key, token } = request;
  const stored = sql.selectLockWithToken.get(key);
  if (stored !== undefined && stored.token === token) {
    const expiresAt = now + request.ttlMs;
    sql.extendOwnLock.run({ key, token, expires_at: expiresAt });
    return { status: 'acquired', lock: lockFromRow({ ...stored, expires_at: expiresAt }) };
  }
  if (stored !== undefined && stored.expires_at > now) return { status: 'held', holder: lockFromRow(stored) };
  const row = { key, owner: request.owner, token, fence: takeFence(ctx), acquired_at: now, expires_at: now + request.ttlMs };
  sql.putLock.run(row);
  return { status: 'acquired', lock: lockFromRow(row) };
}

/** Extends each lock its token still holds live, in input order. */
function renewLocks(ctx: SqliteContext, renewals: readonly LockRenewal[]): LockRenewStatus[] {
  const now = ctx.clock.now();
  const renew = ctx.sql().renewLock;
  return renewals.map(({ key, token, ttlMs }): LockRenewStatus => {
    const expiresAt = now + ttlMs;
    return renew.run({ key, token, expires_at: expiresAt, now }).changes === 1 ? { status: 'renewed', expiresAt } : { status: 'lost' };
  });
}

/** Counts at the store's now. */
function lockStats(ctx: SqliteContext): LockStats {
  const now = ctx.clock.now();
  const row = ctx.sql().lockStats.get({ now });
  const oldest = row?.oldest_acquired_at ?? null;
  return { held: row?.held ?? 0, expired: row?.expired ?? 0, oldestHeldAgeMs: oldest === null ? 0 : Math.max(0, now - oldest) };
}

/**
 * True when `lock.fence` is still the current fence of `lock.key`, inside the caller's
 * transaction: the lock exists with that fence (nobody took it over, it was not reaped).
 */
export function lockFenceIsCurrent(ctx: SqliteContext, lock: LockFence): boolean {
  return ctx.sql().selectLock.get(lock.key)?.fence === lock.fence;
}

/** Named locks over `ctx`. */
export function createLocksPort(ctx: SqliteContext): LocksPort {
  return {
    acquire: ctx.write((request) => acquireLock(ctx, request)),
    renew: ctx.write((renewals) => renewLocks(ctx, renewals)),
    release: ctx.write((key, token): LockReleaseStatus => (ctx.sql().deleteOwnLock.run(key, token).changes === 1 ? 'released' : 'not_owner')),
    get: ctx.outside((key): Lock | null => {
      const row = ctx.sql().selectLock.get(key);
      return row === undefined ? null : lockFromRow(row);
    }),
    list: ctx.read((query = {}) => ctx.sql().listLocks.all(clampLockListLimit(query.limit)).map(lockFromRow)),
    stats: ctx.read(() => lockStats(ctx)),
    reap: ctx.write(() => ctx.sql().reapLocks.run(ctx.clock.now()).changes),
  };
}
