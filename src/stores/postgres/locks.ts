/**
 * The `locks` sub-port of the PostgreSQL store: named locks, each method ONE statement (see
 * sql/locks.ts). `acquire` is one call of the `acquire_lock` function (routines/locks.sql), whose
 * upsert decides under the row lock, so of any number of acquirers in any number of processes one
 * at a time holds a key; its fence comes from fence_seq, shared with job and builder fences.
 */
import type { Lock, LockAcquireRequest, LockAcquireResult, LockRenewal, LockRenewStatus, LockReleaseStatus, LocksPort, LockStats } from '../../core/ports/locks.ts';
import { clampLockListLimit } from '../shared/lock-listing.ts';
import type { LockRow } from '../shared/row-mapping.ts';
import type { PgContext } from './context.ts';
import { queryRows } from './database.ts';
import { lockFromRow } from './rows.ts';

/** A TTL as whole milliseconds, at least 0 (times are bigint columns). */
function wholeMs(ttlMs: number): number {
  return Math.max(0, Math.round(ttlMs));
}

/** Takes `key` when free, expired or already the caller's (see `LocksPort.acquire`). */
async function acquireLock(ctx: PgContext, request: LockAcquireRequest): Promise<LockAcquireResult> {
  const [row] = await queryRows<LockRow & { acquired: boolean }>(ctx.pool, ctx.sql.locks.acquireLock, [
    ctx.now(),
    request.key,
    request.owner,
    request.token,
    wholeMs(request.ttlMs),
  ]);
  if (!row) throw new Error('acquire_lock returned no row');
  const lock = lockFromRow(row);
  return row.acquired ? { status: 'acquired', lock } : { status: 'held', holder: lock };
}

/** Extends each lock its token still holds live, in input order. */
async function renewLocks(ctx: PgContext, renewals: readonly LockRenewal[]): Promise<LockRenewStatus[]> {
  if (renewals.length === 0) return [];
  const rows = await queryRows<{ expires_at: number | null }>(ctx.pool, ctx.sql.locks.renewLocks, [
    ctx.now(),
    renewals.map((r) => r.key),
    renewals.map((r) => r.token),
    renewals.map((r) => wholeMs(r.ttlMs)),
  ]);
  return rows.map((row): LockRenewStatus => (row.expires_at === null ? { status: 'lost' } : { status: 'renewed', expiresAt: row.expires_at }));
}

/** Frees `key` if `token` holds it. */
async function releaseLock(ctx: PgContext, key: string, token: string): Promise<LockReleaseStatus> {
  const rows = await queryRows(ctx.pool, ctx.sql.locks.releaseLock, [key, token]);
  return rows.length === 1 ? 'released' : 'not_owner';
}

/** The lock on `key`, or null. */
async function getLock(ctx: PgContext, key: string): Promise<Lock | null> {
  const [row] = await queryRows<LockRow>(ctx.pool, ctx.sql.locks.getLock, [key]);
  return row ? lockFromRow(row) : null;
}

/** Counts at the store's now. */
async function lockStats(ctx: PgContext): Promise<LockStats> {
  const [row] = await queryRows<{ held: number; expired: number; oldest_held_age_ms: number | null }>(ctx.pool, ctx.sql.locks.lockStats, [ctx.now()]);
  return { held: row?.held ?? 0, expired: row?.expired ?? 0, oldestHeldAgeMs: Math.max(0, row?.oldest_held_age_ms ?? 0) };
}

/** Named locks over the context's pool. */
export function createLocksPort(ctx: PgContext): LocksPort {
  return ctx.port<LocksPort>({
    acquire: (request) => acquireLock(ctx, request),
    renew: (renewals) => renewLocks(ctx, renewals),
    release: (key, token) => releaseLock(ctx, key, token),
    get: (key) => getLock(ctx, key),
    list: async (query = {}) => (await queryRows<LockRow>(ctx.pool, ctx.sql.locks.listLocks, [clampLockListLimit(query.limit)])).map(lockFromRow),
    stats: () => lockStats(ctx),
    reap: async () => (await queryRows<{ reaped: number }>(ctx.pool, ctx.sql.locks.reapLocks, [ctx.now()]))[0]?.reaped ?? 0,
  });
}
