/**
 * The `locks` sub-port of the memory store: one entry per key, fenced from the state's one fence
 * sequence. Every function is one synchronous step on the state, so "exactly one holder" holds by
 * construction; the lock check a completion's publications pass ({@link lockFenceIsCurrent}) is
 * here too.
 */
import type { LockFence } from '../../core/ports/jobs.ts';
import type { Lock, LockAcquireRequest, LockAcquireResult, LockRenewal, LockRenewStatus, LockReleaseStatus, LocksPort, LockStats } from '../../core/ports/locks.ts';
import { clampLockListLimit } from '../shared/lock-listing.ts';
import type { MemoryContext } from './context.ts';
import { deleteWhere, type MemoryState, type StoredLock } from './state.ts';

/** The lock without its token: what callers other than its owner see. */
function publicLock({ token: _token, ...lock }: StoredLock): Lock {
  return lock;
}

/** A lock is held while its deadline is ahead (expired at `expiresAt`, like leases). */
function isLive(lock: StoredLock, now: number): boolean {
  return lock.expiresAt > now;
}

/** Takes `key` when free, expired or already the caller's (see `LocksPort.acquire`). */
function acquireLock(state: MemoryState, request: LockAcquireRequest): LockAcquireResult {
  const now = state.clock.now();
  const stored = state.locks.get(request.key);
  if (stored !== undefined && stored.token === request.token) {
    stored.expiresAt = now + request.ttlMs;
    return { status: 'acquired', lock: publicLock(stored) };
  }
  if (stored !== undefined && isLive(stored, now)) return { status: 'held', holder: publicLock(stored) };
  const lock: StoredLock = {
    key: request.key,
    owner: request.owner,
    token: request.token,
    fence: state.nextFence(),
    acquiredAt: now,
    expiresAt: now + request.ttlMs,
  };
  state.locks.set(request.key, lock);
  return { status: 'acquired', lock: publicLock(lock) };
}

/** Extends each lock its token still holds live, in input order. */
function renewLocks(state: MemoryState, renewals: readonly LockRenewal[]): LockRenewStatus[] {
  const now = state.clock.now();
  return renewals.map((renewal): LockRenewStatus => {
    const stored = state.locks.get(renewal.key);
    if (stored === undefined || stored.token !== renewal.token || !isLive(stored, now)) return { status: 'lost' };
    stored.expiresAt = now + renewal.ttlMs;
    return { status: 'renewed', expiresAt: stored.expiresAt };
  });
}

/** Frees `key` if `token` holds it (even past its expiry, as long as nobody took it over). */
function releaseLock(state: MemoryState, key: string, token: string): LockReleaseStatus {
  if (state.locks.get(key)?.token !== token) return 'not_owner';
  state.locks.delete(key);
  return 'released';
}

/** Locks by key, at most `limit`. */
function listLocks(state: MemoryState, limit: number | undefined): Lock[] {
  return [...state.locks.values()]
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .slice(0, clampLockListLimit(limit))
    .map(publicLock);
}

/** Counts at the state's now. */
function lockStats(state: MemoryState): LockStats {
  const now = state.clock.now();
  const stats: LockStats = { held: 0, expired: 0, oldestHeldAgeMs: 0 };
  for (const lock of state.locks.values()) {
    if (!isLive(lock, now)) {
      stats.expired += 1;
      continue;
    }
    stats.held += 1;
    stats.oldestHeldAgeMs = Math.max(stats.oldestHeldAgeMs, now - lock.acquiredAt);
  }
  return stats;
}

/**
 * True when `lock.fence` is still the current fence of `lock.key`: the lock exists with that
 * fence (its holder may be past its expiry, but nobody took it over and it was not reaped).
 */
export function lockFenceIsCurrent(state: MemoryState, lock: LockFence): boolean {
  return state.locks.get(lock.key)?.fence === lock.fence;
}

/** The named locks of the state. */
export function createLocksPort(ctx: MemoryContext): LocksPort {
  const { state } = ctx;
  return {
    acquire: ctx.atomic((request) => acquireLock(state, request)),
    renew: ctx.atomic((renewals) => renewLocks(state, renewals)),
    release: ctx.atomic((key, token) => releaseLock(state, key, token)),
    get: ctx.atomic((key) => {
      const stored = state.locks.get(key);
      return stored === undefined ? null : publicLock(stored);
    }),
    list: ctx.atomic((query = {}) => listLocks(state, query.limit)),
    stats: ctx.atomic(() => lockStats(state)),
    reap: ctx.atomic(() => {
      const now = state.clock.now();
      return deleteWhere(state.locks, (lock) => !isLive(lock, now));
    }),
  };
}
