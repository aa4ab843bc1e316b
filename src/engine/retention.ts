/**
 * Retention in the engine: the reaper's prune pass (one bounded batch at a time, never more than
 * one in flight, so the hot path waits at most one short transaction) and the whole pass of
 * `kiln prune` (batches until nothing has expired). What a batch deletes is the store's
 * `retention.prune`; artifacts only the pruned runs referenced are then unreferenced and fall to
 * artifact GC (artifact-gc.ts) once past its grace period.
 */
import type { Clock } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import type { PruneCounts, RetentionPolicy } from '../core/ports/retention.ts';
import { noPruneCounts } from '../core/ports/retention.ts';
import type { Store } from '../core/ports/store.ts';

/** How the reaper prunes: the policy, the batch size and how often a batch runs. */
export interface RetentionSettings extends RetentionPolicy {
  /** Runs (and request records) per batch, >= 1. */
  batchSize: number;
  /** A batch at most this often; 0: never (only `kiln prune`). A full batch is followed by the next one at the next reaper tick. */
  intervalMs: number;
}

/** Adds `more` into `total`. */
export function addPruneCounts(total: PruneCounts, more: PruneCounts): PruneCounts {
  for (const kind of Object.keys(total) as (keyof PruneCounts)[]) total[kind] += more[kind];
  return total;
}

/** True when a batch may have left expired rows behind (it hit its bound). */
function wasFull(counts: PruneCounts, batchSize: number): boolean {
  return counts.runs >= batchSize || counts.requests >= batchSize;
}

/** The reaper's prune pass: `tick` on every reaper tick prunes one batch when one is due. */
export interface RetentionPass {
  /** Prunes one batch if due; resolves with its counts, or null when none was due. Never throws past the caller's catch: errors propagate. */
  tick(): Promise<PruneCounts | null>;
}

/** Creates the reaper's prune pass over `deps.store` (see {@link RetentionSettings}). */
export function createRetentionPass(deps: { store: Store; clock: Clock; logger: Logger }, settings: RetentionSettings): RetentionPass {
  // The first batch is due one interval after the worker starts: starting many workers at once
  // does not make them all prune at once.
  let dueAt = deps.clock.now() + settings.intervalMs;
  return {
    async tick() {
      if (settings.intervalMs <= 0 || deps.clock.now() < dueAt) return null;
      const counts = await deps.store.retention.prune(settings, settings.batchSize);
      // A full batch: more has expired, so the next tick takes the next batch (catching up after
      // downtime, one short batch per reaper tick); else wait a whole interval.
      dueAt = wasFull(counts, settings.batchSize) ? deps.clock.now() : deps.clock.now() + settings.intervalMs;
      if (counts.runs + counts.requests > 0) deps.logger.info({ ...counts }, 'expired runs and requests pruned');
      return counts;
    },
  };
}

/** Options of {@link pruneExpired}. */
export interface PruneOptions {
  /** Count what would go (`retention.count`) without deleting. */
  dryRun?: boolean;
  /** Stops between batches once aborted (the counts so far are returned). */
  signal?: AbortSignal;
}

/**
 * A whole prune pass (`kiln prune`): batches of `batchSize` until one is not full, or with
 * `dryRun` the count of what that would delete. Returns the totals per kind.
 */
export async function pruneExpired(store: Store, settings: Omit<RetentionSettings, 'intervalMs'>, options: PruneOptions = {}): Promise<PruneCounts> {
  if (options.dryRun) return store.retention.count(settings);
  const total = noPruneCounts();
  for (;;) {
    const counts = await store.retention.prune(settings, settings.batchSize);
    addPruneCounts(total, counts);
    if (!wasFull(counts, settings.batchSize) || options.signal?.aborted) return total;
  }
}
