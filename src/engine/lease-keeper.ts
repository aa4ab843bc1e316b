/**
 * Keeps the leases of a worker's running jobs alive: one timer per worker, one batched
 * `jobs.renew` call per tick for every job whose heartbeat is due (and, beside it, one batched
 * `locks.renew` for the stage locks those jobs run under). A lease reported lost or cancelled, or
 * a lock reported lost, aborts that job's handler at once.
 */
import type { Clock, CancelTimer } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import type { JsonValue } from '../core/model.ts';
import type { EngineObserver } from '../core/observer.ts';
import type { LeaseRef, LeaseRenewal } from '../core/ports/jobs.ts';
import type { LockRenewStatus } from '../core/ports/locks.ts';
import type { Store } from '../core/ports/store.ts';
import { StageAbortError } from './abort-reason.ts';
import type { JobAbort } from './job-abort.ts';

/** A stage lock a held job runs under, renewed with its lease (see `LockPolicy`). */
export interface HeldLock {
  key: string;
  token: string;
  ttlMs: number;
}

/** A job this worker holds. */
export interface HeldJob {
  lease: LeaseRef;
  /** The job's queue (heartbeat losses are counted per queue). */
  queue: string;
  heartbeatMs: number;
  abort: JobAbort;
  lastRenewAt: number;
  progress: JsonValue | undefined;
  /** The stage lock the job holds, renewed on every heartbeat of its lease; cleared once lost. */
  lock?: HeldLock | undefined;
  /** Called once when the job is released (its handler is done, or it is handed back). */
  onRelease?: () => void;
}

/** What renewing a held job found. */
type RenewOutcome = 'renewed' | 'lost' | 'cancelled';

/** Heartbeats for held jobs. */
export interface LeaseKeeper {
  hold(lease: LeaseRef, queue: string, heartbeatMs: number, abort: JobAbort): HeldJob;
  release(held: HeldJob): void;
  /** Renews one lease (and its lock) now (ctx.heartbeat()); `lost` when either was lost. */
  renewNow(held: HeldJob): Promise<RenewOutcome>;
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

  const apply = (job: HeldJob, status: RenewOutcome): void => {
    if (status === 'renewed') {
      job.lastRenewAt = clock.now();
      return;
    }
    if (status === 'lost') observer.heartbeatLost(job.queue);
    const reason =
      status === 'cancelled'
        ? new StageAbortError('cancelled', 'the run was cancelled or superseded')
        : new StageAbortError('lease_lost', `lease on job ${job.lease.jobId} was lost`);
    job.abort.abort(reason);
    held.delete(job);
  };

  /** A lock reported lost: the handler must stop (its writes would no longer be fenced). */
  const applyLock = (job: HeldJob, status: LockRenewStatus | undefined): boolean => {
    if (status?.status === 'renewed' || job.lock === undefined) return true;
    const { key } = job.lock;
    job.lock = undefined;
    job.abort.abort(new StageAbortError('lock_lost', `lock ${key} was lost (it expired or was taken over)`));
    return false;
  };

  /**
   * Renews the leases of `jobs` and the locks they hold (two calls at once; one without locks).
   * Returns each job's status, `lost` when its lock was lost.
   */
  const renew = async (jobs: HeldJob[]): Promise<RenewOutcome[]> => {
    if (jobs.length === 0) return [];
    const renewals: LeaseRenewal[] = jobs.map((j) => (j.progress === undefined ? { ...j.lease } : { ...j.lease, progress: j.progress }));
    for (const j of jobs) j.progress = undefined;
    const locked = jobs.filter((j): j is HeldJob & { lock: HeldLock } => j.lock !== undefined);
    const [statuses, lockStatuses] = await Promise.all([
      store.jobs.renew(renewals),
      locked.length === 0 ? [] : store.locks.renew(locked.map(({ lock }) => ({ key: lock.key, token: lock.token, ttlMs: lock.ttlMs }))),
    ]);
    const outcomes = jobs.map((j, i): RenewOutcome => {
      const status = statuses[i]?.status ?? 'lost';
      apply(j, status);
      return status;
    });
    const lockLost = new Set<HeldJob>(locked.filter((j, i) => !applyLock(j, lockStatuses[i])));
    return outcomes.map((status, i) => (status === 'renewed' && lockLost.has(jobs[i] as HeldJob) ? 'lost' : status));
  };

  const tick = async (): Promise<void> => {
    timer = undefined;
    const now = clock.now();
    const due = [...held].filter((j) => now - j.lastRenewAt >= j.heartbeatMs && !j.abort.aborted);
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
    hold(lease, queue, heartbeatMs, abort) {
      const job: HeldJob = { lease, queue, heartbeatMs, abort, lastRenewAt: clock.now(), progress: undefined };
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
      const [status] = await renew([job]);
      return status ?? 'lost';
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
