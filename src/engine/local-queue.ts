/**
 * A worker's slots per queue: jobs running (at most the stage's `concurrency`) and jobs claimed
 * ahead, waiting to run (at most its `prefetch`). Waiting jobs are leased and heartbeated like
 * running ones; starting one needs no round trip to the store.
 */
import type { ClaimedJob } from '../core/ports/jobs.ts';
import type { QueueSlots } from './kiln-types.ts';
import type { HeldJob } from './lease-keeper.ts';
import type { PlannedStage } from './stage-plan.ts';

/** A claimed job with its lease. */
export interface LocalJob {
  claimed: ClaimedJob;
  held: HeldJob;
}

interface Slots {
  stage: PlannedStage;
  running: number;
  waiting: LocalJob[];
}

/** Slots of every queue a worker serves. */
export interface LocalQueues {
  /**
   * How many jobs to claim for `stage` now: 0 until enough room has freed up to make a batch
   * worth a round trip (half the prefetch), or at once when the queue has nothing at all.
   */
  wanted(stage: PlannedStage): number;
  /** Adds claimed jobs to their queue's waiting list. */
  add(jobs: readonly LocalJob[]): void;
  /** Takes the waiting jobs that free running slots allow, counting them as running. */
  startable(): LocalJob[];
  /** A running job of `queue` finished. */
  finished(queue: string): void;
  /** Removes and returns every waiting job (shutdown). */
  takeWaiting(): LocalJob[];
  /** Jobs waiting in all queues. */
  waitingCount(): number;
  /** Per queue: handlers running now and the stage's concurrency. */
  usage(): QueueSlots[];
}

/** Creates empty slots for `stages`. */
export function createLocalQueues(stages: readonly PlannedStage[]): LocalQueues {
  const slots = new Map<string, Slots>(stages.map((stage) => [stage.queue, { stage, running: 0, waiting: [] }]));
  const of = (queue: string): Slots => {
    const s = slots.get(queue);
    if (!s) throw new Error(`worker does not serve queue ${queue}`);
    return s;
  };
  return {
    wanted(stage) {
      const s = of(stage.queue);
      const { concurrency, prefetch } = stage.policy;
      const held = s.running + s.waiting.length;
      const room = concurrency + prefetch - held;
      if (room <= 0) return 0;
      return held === 0 || room >= Math.max(1, Math.ceil(prefetch / 2)) ? room : 0;
    },
    add(jobs) {
      for (const job of jobs) of(job.claimed.job.queue).waiting.push(job);
    },
    startable() {
      const out: LocalJob[] = [];
      for (const s of slots.values()) {
        while (s.running < s.stage.policy.concurrency && s.waiting.length > 0) {
          const next = s.waiting.shift();
          if (next) {
            s.running += 1;
            out.push(next);
          }
        }
      }
      return out;
    },
    finished(queue) {
      of(queue).running -= 1;
    },
    takeWaiting() {
      const out: LocalJob[] = [];
      for (const s of slots.values()) out.push(...s.waiting.splice(0));
      return out;
    },
    waitingCount: () => [...slots.values()].reduce((n, s) => n + s.waiting.length, 0),
    usage: () => [...slots.values()].map((s) => ({ queue: s.stage.queue, busy: s.running, slots: s.stage.policy.concurrency })),
  };
}
