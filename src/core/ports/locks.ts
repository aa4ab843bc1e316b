/**
 * The `locks` sub-port: named locks kept by the store, `(key) -> owner, token, fence, expiry`.
 * A lock is acquired with a TTL, renewed by its owner's heartbeat and released only by its owner
 * (the holder of its token). Every acquisition by a new owner takes a fence from the store's one
 * fence sequence (the one job leases and cache builders use), so a fence is greater than every
 * fence issued before and a later holder always has the higher fence. Time is the store's clock:
 * a lock is held while `now < expiresAt`, and an expired lock may be taken over at once.
 */

/** A lock as the store holds it, without its token (the owner's secret). */
export interface Lock {
  key: string;
  /** Who holds it (a worker id), for operators. */
  owner: string;
  /** From the store's fence sequence; only grows from one holder to the next. */
  fence: number;
  /** When this owner acquired it (store clock, epoch ms); renewals keep it. */
  acquiredAt: number;
  /** Held until this time (store clock, epoch ms). */
  expiresAt: number;
}

/** A request to take `key` (see {@link LocksPort.acquire}). */
export interface LockAcquireRequest {
  key: string;
  owner: string;
  /** The token the caller will hold the lock by; renew and release present it. */
  token: string;
  /** The lock expires this long from now unless renewed. */
  ttlMs: number;
}

/** Outcome of {@link LocksPort.acquire}. */
export type LockAcquireResult =
  /** The caller holds the lock: `lock.fence` is the fence its writes carry. */
  | { status: 'acquired'; lock: Lock }
  /** Another owner holds a live lock on the key: by whom, with which fence, until when. */
  | { status: 'held'; holder: Lock };

/** A heartbeat of one held lock (see {@link LocksPort.renew}). */
export interface LockRenewal {
  key: string;
  token: string;
  /** The lock expires this long from now. */
  ttlMs: number;
}

/** Outcome of renewing one lock. */
export type LockRenewStatus =
  | { status: 'renewed'; expiresAt: number }
  /** The token no longer holds a live lock on the key (it expired, was reaped or taken over): stop work. */
  | { status: 'lost' };

/** Outcome of {@link LocksPort.release}. */
export type LockReleaseStatus = 'released' | 'not_owner';

/** Held locks, for operators and the oldest-held-lock metric. */
export interface LockStats {
  /** Live locks (not expired). */
  held: number;
  /** Expired locks nobody reaped or took over yet (stale: their owner stopped renewing). */
  expired: number;
  /** Age of the live lock acquired longest ago (now - acquiredAt), 0 when none. */
  oldestHeldAgeMs: number;
}

/** Named locks; each method is ONE atomic unit on the store clock. */
export interface LocksPort {
  /**
   * Takes `key` for `token` when nobody holds it, or its holder's lock expired (`acquired`, with
   * a new fence, `acquiredAt = now`, `expiresAt = now + ttlMs`). When `token` already holds it
   * (an acquire retried after a lost answer) it stays the caller's with the same fence and
   * `acquiredAt`, extended to `now + ttlMs`. Otherwise `held`, changing nothing. Of any number of
   * concurrent acquirers of a free key, in any number of processes, exactly one gets `acquired`.
   */
  acquire(request: LockAcquireRequest): Promise<LockAcquireResult>;

  /**
   * Heartbeats, in input order: extends each lock its token still holds live (`expiresAt > now`)
   * to `now + ttlMs`; `lost` otherwise (expired, reaped, released or taken over), changing nothing.
   */
  renew(renewals: readonly LockRenewal[]): Promise<LockRenewStatus[]>;

  /**
   * Frees `key` if `token` holds it (`released`; expired but not taken over still counts as
   * held by it); `not_owner`, changing nothing, otherwise.
   */
  release(key: string, token: string): Promise<LockReleaseStatus>;

  /** The lock on `key` (expired or not, until reaped or taken over), or null. */
  get(key: string): Promise<Lock | null>;

  /** Locks by key (byte order), expired ones included until reaped; at most `limit` (default 100). */
  list(query?: { limit?: number }): Promise<Lock[]>;

  /** Counts and the oldest live lock's age, at the store's now. */
  stats(): Promise<LockStats>;

  /**
   * Removes expired locks (stale: their owner stopped renewing, e.g. it crashed); returns how
   * many. A later acquirer takes a new fence either way, so reaping never lowers a fence.
   */
  reap(): Promise<number>;
}
