/**
 * Group commit: attempts that finish in the same tick are committed in ONE backend transaction
 * (`Backend.commit`). Each item is still fenced by its own lease, so batching changes cost, not
 * meaning. A batch is flushed at the end of the current microtask queue; items arriving while a
 * flush is in flight wait for the next one.
 */
import type { Backend, CommitItem, CommitResult } from '../core/ports.ts';

interface Pending {
  item: CommitItem;
  resolve: (result: CommitResult) => void;
  reject: (err: unknown) => void;
}

/** Queues commit items and flushes them together. */
export interface CommitBatcher {
  commit(item: CommitItem): Promise<CommitResult>;
}

/** Creates a batcher flushing at most `maxBatch` items per transaction. */
export function createCommitBatcher(backend: Backend, maxBatch = 256): CommitBatcher {
  let queue: Pending[] = [];
  let scheduled = false;
  let flushing = false;

  const flush = async (): Promise<void> => {
    scheduled = false;
    if (flushing || queue.length === 0) return;
    flushing = true;
    const batch = queue.slice(0, maxBatch);
    queue = queue.slice(batch.length);
    try {
      const results = await backend.commit(batch.map((p) => p.item));
      batch.forEach((p, i) => {
        const result = results[i];
        if (result) p.resolve(result);
        else p.reject(new Error('backend returned fewer commit results than items'));
      });
    } catch (err) {
      for (const p of batch) p.reject(err);
    } finally {
      flushing = false;
      if (queue.length > 0) schedule();
    }
  };

  const schedule = (): void => {
    if (scheduled) return;
    scheduled = true;
    queueMicrotask(() => void flush());
  };

  return {
    commit(item) {
      return new Promise<CommitResult>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        schedule();
      });
    },
  };
}
