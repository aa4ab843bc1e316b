/**
 * Lock metrics: waits, wait time and stale locks reaped (fed by engine events), and the held locks
 * and the oldest held lock's age (read from the store at scrape time). Names, labels and HELP
 * texts are part of the public metrics contract (see metrics.ts).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { LockStats } from '../core/ports/locks.ts';

/** Reads the store's lock counts (usually `kiln.lockStats()`); called once per scrape. */
export type LockStatsSource = () => Promise<LockStats>;

/** Lock wait buckets, seconds: free at once (0) to five minutes. */
export const LOCK_WAIT_BUCKETS_SECONDS: readonly number[] = [0, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/** The event-fed lock metrics. */
export interface LockEventMetrics {
  lockWaited(pipeline: string, stage: string): void;
  lockAcquired(pipeline: string, stage: string, waitMs: number): void;
  staleLocksReaped(count: number): void;
}

/** Registers the event-fed lock metrics on `registry`. */
export function createLockEventMetrics(registry: Registry): LockEventMetrics {
  const registers = [registry];
  const waits = new Counter({
    name: 'kiln_lock_waits_total',
    help: 'Times a stage found its lock held by another job and was handed back to wait (with backoff; the attempt is not counted).',
    labelNames: ['pipeline', 'stage'] as const,
    registers,
  });
  const waitTime = new Histogram({
    name: 'kiln_lock_wait_seconds',
    help: 'Time a stage waited for its lock, from the first time it found it held until it took it (0 when it was free).',
    labelNames: ['pipeline', 'stage'] as const,
    buckets: [...LOCK_WAIT_BUCKETS_SECONDS],
    registers,
  });
  const reaped = new Counter({
    name: 'kiln_stale_locks_reaped_total',
    help: 'Expired locks the reaper removed: their owner stopped renewing them (it crashed or stalled).',
    registers,
  });
  return {
    lockWaited: (pipeline, stage) => waits.inc({ pipeline, stage }),
    lockAcquired(pipeline, stage, waitMs) {
      if (Number.isFinite(waitMs)) waitTime.observe({ pipeline, stage }, Math.max(0, waitMs) / 1000);
    },
    staleLocksReaped(count) {
      if (count > 0) reaped.inc(count);
    },
  };
}

/** Gauges read from the store at scrape time; both share one `lockStats()` call per scrape. */
export function registerLockGauges(registry: Registry, source: () => LockStatsSource | undefined, shared: <T>(load: () => Promise<T>) => () => Promise<T>): void {
  const registers = [registry];
  const snapshot = shared(async (): Promise<LockStats | null> => {
    const fn = source();
    if (!fn) return null;
    // A store that cannot answer leaves the gauges empty for this scrape (queue stats count it).
    return fn().catch(() => null);
  });
  new Gauge({
    name: 'kiln_locks',
    help: 'Locks in the store: held (live) and expired (stale, not reaped or taken over yet).',
    labelNames: ['state'] as const,
    registers,
    async collect() {
      const stats = await snapshot();
      this.reset();
      if (stats === null) return;
      this.set({ state: 'held' }, stats.held);
      this.set({ state: 'expired' }, stats.expired);
    },
  });
  new Gauge({
    name: 'kiln_lock_oldest_held_age_seconds',
    help: 'Age of the live lock held longest (since its owner took it), 0 when none; growth means a holder never lets go.',
    registers,
    async collect() {
      const stats = await snapshot();
      this.reset();
      if (stats !== null) this.set(stats.oldestHeldAgeMs / 1000);
    },
  });
}
