/**
 * Queue activity off the job path: a worker counts, in memory, the jobs it completed and the
 * failed attempts it committed per queue (from the events the executor reports anyway), and hands
 * the counts to the store now and then (`stats.recordActivity`, one small transaction of its own),
 * so a commit writes nothing more for the dashboard's throughput. Counts are metrics: a crash
 * loses at most the counts since the last report.
 */
import type { Logger } from '../core/logger.ts';
import type { EngineObserver, StageOutcome } from '../core/observer.ts';
import { queueName } from '../core/pipeline/define-pipeline.ts';
import type { ActivitySample } from '../core/ports/stats.ts';
import type { Store } from '../core/ports/store.ts';

/** How each committed outcome counts; refused commits (`lease_lost`, `cancelled`) count nothing. */
const COUNTED_AS: Partial<Record<StageOutcome, 'completed' | 'failed'>> = {
  succeeded: 'completed',
  retried: 'failed',
  dead_lettered: 'failed',
  failed: 'failed',
  parked: 'failed',
};

/** Counts committed work per queue and reports it. */
export interface ActivityRecorder {
  /** `inner` with every event passed on, and committed executions and idempotent skips counted. */
  readonly observer: EngineObserver;
  /** Reports the counts gathered since the last report; a failed report keeps them for the next. */
  flush(): Promise<void>;
}

/** Creates a recorder reporting to `store`, observing through `inner`. */
export function createActivityRecorder(store: Store, inner: EngineObserver, logger: Logger): ActivityRecorder {
  let counts = new Map<string, ActivitySample>();
  const add = (queue: string, field: 'completed' | 'failed'): void => {
    let sample = counts.get(queue);
    if (!sample) counts.set(queue, (sample = { queue, completed: 0, failed: 0 }));
    sample[field] += 1;
  };
  const observer: EngineObserver = {
    ...inner,
    stageExecuted(e) {
      inner.stageExecuted(e);
      const field = COUNTED_AS[e.outcome];
      if (field) add(queueName(e.pipeline, e.stage), field);
    },
    idempotentSkip(pipeline, stage) {
      inner.idempotentSkip(pipeline, stage);
      add(queueName(pipeline, stage), 'completed');
    },
  };
  return {
    observer,
    async flush() {
      if (counts.size === 0) return;
      const samples = [...counts.values()];
      counts = new Map();
      try {
        await store.stats.recordActivity(samples);
      } catch (err) {
        // Put them back: they are added to whatever was counted meanwhile at the next report.
        for (const s of samples) {
          const now = counts.get(s.queue);
          counts.set(s.queue, now ? { queue: s.queue, completed: now.completed + s.completed, failed: now.failed + s.failed } : s);
        }
        logger.warn({ err }, 'could not record queue activity; retrying with the next report');
      }
    },
  };
}
