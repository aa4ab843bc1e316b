/**
 * Keeps the leases of a worker's running jobs alive: one timer per worker, one batched
 * `jobs.renew` call per tick for every job whose heartbeat is due. A lease reported lost or
 * cancelled aborts that job's handler at once.
 */
import type { Clock, CancelTimer } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import type { JsonValue } from '../core/model.ts';
import type { EngineObserver } from '../core/observer.ts';
import type { LeaseRef, LeaseRenewal } from '../core/ports/jobs.ts';
import type { Store } from '../core/ports/store.ts';
import { StageAbortError } from './abort-reason.ts';

/** A job this worker holds. */
export interface HeldJob {
  lease: LeaseRef;
  /** The job's queue (heartbeat losses are counted per queue). */
  queue: string;
  heartbeatMs: number;
  controller: AbortController;
  lastRenewAt: number;
  progress: JsonValue | undefined;
  /** Called once when the job is released (its handler is done, or it is handed back). */
  onRelease?: () => void;
}

/** Heartbeats for held jobs. */
export interface LeaseKeeper {
  hold(lease: LeaseRef, queue: string, heartbeatMs: number, controller: AbortController): HeldJob;
  release(held: HeldJob): void;
  /** Renews one lease now (ctx.heartbeat()). */
  renewNow(held: HeldJob): Promise<'renewed' | 'lost' | 'cancelled'>;
  progress(held: HeldJob, marker: JsonValue): void;
  /** Jobs held now. */
  all(): HeldJob[];
  stop(): void;
}

/** Creates a lease keeper ticking every `tickMs`. */
export function createLeaseKeeper(options: { store: Store; clock: Clock; logger: Logger; observer: EngineObserver; tickMs: number }): LeaseKeeper {
  const { store, clock, logger, observer } = options;
  const held = new Set<HeldJob>();
  let timer: CancelTimer | undefined;
  let stopped = false;

  const apply = (job: HeldJob, status: 'renewed' | 'lost' | 'cancelled'): void => {
    if (status === 'renewed') {
      job.lastRenewAt = clock.now();
      return;
    }
    if (status === 'lost') observer.heartbeatLost(job.queue);
    const reason =
      status === 'cancelled'
        ? new StageAbortError('cancelled', 'the run was cancelled or superseded')
        : new StageAbortError('lease_lost', `lease on job ${job.lease.jobId} was lost`);
    job.controller.abort(reason);
    held.delete(job);
  };

  const renew = async (jobs: HeldJob[]): Promise<void> => {
    if (jobs.length === 0) return;
    const renewals: LeaseRenewal[] = jobs.map((j) => (j.progress === undefined ? { ...j.lease } : { ...j.lease, progress: j.progress }));
    for (const j of jobs) j.progress = undefined;
    const statuses = await store.jobs.renew(renewals);
    jobs.forEach((j, i) => apply(j, statuses[i]?.status ?? 'lost'));
  };

  const tick = async (): Promise<void> => {
    timer = undefined;
    const now = clock.now();
    const due = [...held].filter((j) => now - j.lastRenewAt >= j.heartbeatMs && !j.controller.signal.aborted);
    try {
      await renew(due);
    } catch (err) {
      // The store is unreachable: keep the jobs running; if the lease expires meanwhile the next
      // renewal (or the commit) reports it lost. Never abort on a transient store error.
      logger.warn({ err }, 'lease renewal failed; will retry');
    }
    schedule();
  };

  const schedule = (): void => {
    if (stopped || timer || held.size === 0) return;
    timer = clock.setTimer(() => void tick(), options.tickMs);
  };

  return {
    hold(lease, queue, heartbeatMs, controller) {
      const job: HeldJob = { lease, queue, heartbeatMs, controller, lastRenewAt: clock.now(), progress: undefined };
      held.add(job);
      schedule();
      return job;
    },
    release(job) {
      held.delete(job);
      const onRelease = job.onRelease;
      job.onRelease = undefined;
      onRelease?.();
    },
    async renewNow(job) {
      const [status] = await store.jobs.renew([job.progress === undefined ? job.lease : { ...job.lease, progress: job.progress }]);
      const s = status?.status ?? 'lost';
      apply(job, s);
      return s;
    },
    progress(job, marker) {
      job.progress = marker;
    },
    all: () => [...held],
    stop() {
      stopped = true;
      timer?.();
      timer = undefined;
    },
  };
}
