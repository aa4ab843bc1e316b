/**
 * Group commit: attempts that finish in the same tick are committed in ONE store transaction
 * (`Store.jobs.commit`). Each item is still fenced by its own lease, so batching changes cost, not
 * meaning. A batch is flushed at the end of the current microtask queue; up to `maxInFlight`
 * batches may be in flight at once (a networked store overlaps them on its pool; one run never has
 * two items in flight, since its next job exists only once the previous commit landed).
 *
 * When the store is unreachable (a retryable error such as STORE_UNAVAILABLE), items are retried
 * with backoff until their lease would have expired: a restart of the database then costs a
 * delayed commit, not a re-run of finished work. Retrying is safe even if the failed call did
 * commit: the job is gone, so the retry is refused and changes nothing.
 */
import type { Clock } from '../core/clock.ts';
import { PipelineError } from '../core/errors.ts';
import type { CommitItem, CommitResult } from '../core/ports/jobs.ts';
import type { Store } from '../core/ports/store.ts';

interface Pending {
  item: CommitItem;
  /** Epoch ms after which a retry is pointless (the lease has expired). */
  retryUntil: number;
  retries: number;
  resolve: (result: CommitResult) => void;
  reject: (err: unknown) => void;
}

/** Queues commit items and flushes them together. */
export interface CommitBatcher {
  /** Commits `item`; retries transient store failures until `retryUntil` (epoch ms). */
  commit(item: CommitItem, retryUntil: number): Promise<CommitResult>;
}

const RETRY_BASE_MS = 100;
const RETRY_CAP_MS = 2_000;

/** Creates a batcher flushing at most `maxBatch` items per transaction. */
export function createCommitBatcher(store: Store, clock: Clock, { maxBatch = 256, maxInFlight = 4 } = {}): CommitBatcher {
  let queue: Pending[] = [];
  let scheduled = false;
  let inFlight = 0;

  const retryLater = (p: Pending): void => {
    const delayMs = Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** p.retries++);
    clock.setTimer(() => {
      queue.push(p);
      schedule();
    }, delayMs);
  };

  const failed = (batch: Pending[], err: unknown): void => {
    const transient = err instanceof PipelineError && err.retryable;
    for (const p of batch) {
      if (transient && clock.now() < p.retryUntil) retryLater(p);
      else p.reject(err);
    }
  };

  const flush = async (): Promise<void> => {
    scheduled = false;
    if (inFlight >= maxInFlight || queue.length === 0) return;
    inFlight += 1;
    const batch = queue.slice(0, maxBatch);
    queue = queue.slice(batch.length);
    try {
      const results = await store.jobs.commit(batch.map((p) => p.item));
      batch.forEach((p, i) => {
        const result = results[i];
        if (result) p.resolve(result);
        else p.reject(new Error('store returned fewer commit results than items'));
      });
    } catch (err) {
      failed(batch, err);
    } finally {
      inFlight -= 1;
      if (queue.length > 0) schedule();
    }
  };

  const schedule = (): void => {
    if (scheduled) return;
    scheduled = true;
    queueMicrotask(() => void flush());
  };

  return {
    commit(item, retryUntil) {
      return new Promise<CommitResult>((resolve, reject) => {
        queue.push({ item, retryUntil, retries: 0, resolve, reject });
        schedule();
      });
    },
  };
}
