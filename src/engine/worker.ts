/**
 * The worker loop: claims batches per queue up to each stage's concurrency, runs each job through
 * the executor, and sleeps until a wake hint or the poll interval when there is nothing to do.
 * A reaper timer hands expired leases back, sweeps orphaned temp files and reports what this worker
 * committed per queue (queue activity, see activity-recorder.ts).
 */
import { WAKE_REASON, type CancelTimer } from '../core/clock.ts';
import { NotFoundError } from '../core/errors.ts';
import type { ClaimedJob, ClaimRequest } from '../core/ports/jobs.ts';
import { createActivityRecorder } from './activity-recorder.ts';
import { JobAbort } from './job-abort.ts';
import { createLocalQueues, type LocalJob } from './local-queue.ts';
import { StageAbortError } from './abort-reason.ts';
import { createCommitBatcher } from './commit-batcher.ts';
import { executeJob, type ExecutorDeps } from './execute-job.ts';
import type { Worker, WorkerOptions } from './kiln-types.ts';
import { createLeaseKeeper, type HeldJob } from './lease-keeper.ts';
import { createThreadPool } from './thread-pool.ts';
import { collectArtifacts } from './artifact-gc.ts';
import { crashPoint } from './crash-points.ts';
import { createRetentionPass } from './retention.ts';
import type { WorkerDeps } from './worker-deps.ts';


const DEFAULT_POLL_MS = 250;
const DEFAULT_REAP_MS = 1_000;
const DEFAULT_TEMP_GRACE_MS = 3_600_000;
const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;
/** Orphaned temps and expired cache entries are swept on every Nth reaper tick. */
const TEMP_SWEEP_EVERY = 60;
/** Unreferenced artifacts are collected on every Nth reaper tick (it lists the whole store). */
const ARTIFACT_GC_EVERY = 300;
const DEFAULT_ARTIFACT_GRACE_MS = 3_600_000;
/** A cache entry whose builder's lease expired this long ago is abandoned (its builder crashed). */
const CACHE_BUILD_GRACE_MS = 60_000;

/** Creates a worker serving `options.queues` (default: every queue of every pipeline). */
export function createWorker(deps: WorkerDeps, options: WorkerOptions = {}): Worker {
  const id = options.workerId ?? `worker-${deps.ids.token().slice(0, 12)}`;
  const queues = options.queues ?? deps.plan.queues;
  const stages = queues.map((q) => {
    const stage = deps.plan.byQueue(q);
    if (!stage) throw new NotFoundError('queue', q);
    return stage;
  });
  const logger = deps.logger.child({ worker_id: id });
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const minHeartbeatMs = Math.min(...stages.map((s) => s.policy.heartbeatMs));
  const leases = createLeaseKeeper({ store: deps.store, clock: deps.clock, logger, observer: deps.observer, tickMs: Math.max(10, Math.floor(minHeartbeatMs / 2)) });
  const threadSlots = stages.filter((s) => s.policy.isolation === 'thread').reduce((n, s) => n + s.policy.concurrency, 0);
  const threads = createThreadPool(threadSlots);
  // Stale locks are reaped on every tick where this worker's stages take locks, else now and then.
  const reapLocksEvery = stages.some((s) => s.lock !== null) ? 1 : TEMP_SWEEP_EVERY;
  // What this worker commits is counted in memory and reported by the reaper tick (queue activity).
  const activity = createActivityRecorder(deps.store, deps.observer, logger);
  const exec: ExecutorDeps = {
    ...deps,
    observer: activity.observer,
    workerId: id,
    logger,
    leases,
    threads,
    commits: createCommitBatcher(deps.store, deps.clock),
    beforeCommit: options.beforeCommit,
  };
  const slots = createLocalQueues(stages);
  const served = new Set(queues);
  const executions = new Set<Promise<void>>();
  let running = false;
  let stopping = false;
  let loopDone: Promise<void> = Promise.resolve();
  let wakeSleep: AbortController | undefined;
  /**
   * A wake that came while the loop was not sleeping (its claim was in flight): that claim may
   * have read the queue before the job that woke us was committed, so the next sleep is skipped
   * rather than waiting a whole poll interval for work that is already there.
   */
  let wokenWhileAwake = false;
  let reapTimer: CancelTimer | undefined;
  let reapTicks = 0;
  // One bounded prune batch per due reaper tick, inside the tick: never two at once, none after stop.
  const retention = options.retention ? createRetentionPass({ ...deps, logger }, options.retention) : undefined;

  const wake = (): void => {
    if (wakeSleep === undefined) wokenWhileAwake = true;
    else wakeSleep.abort(WAKE_REASON);
  };
  const unsubscribe = deps.store.onWake((queue) => {
    if (served.has(queue)) wake();
  });

  /**
   * What frees a running job's slot, once: the slot is the handler's, so it frees when the
   * handler is done, before the commit lands. (Returned by a function, not defined in a named
   * position: see heartbeatOf in execute-job.ts.)
   */
  const slotFreer = (queue: string): (() => void) => {
    let slotFreed = false;
    return () => {
      if (slotFreed) return;
      slotFreed = true;
      slots.finished(queue);
      dispatch();
      wake();
    };
  };

  /** Starts every waiting job that a free slot allows. */
  const dispatch = (): void => {
    for (const { claimed, held } of slots.startable()) {
      const freeSlot = slotFreer(claimed.job.queue);
      const p: Promise<void> = executeJob(exec, claimed, held, freeSlot).finally(() => {
        freeSlot();
        executions.delete(p);
      });
      executions.add(p);
    }
  };

  /** Leases a claimed job from now on: heartbeats run while it waits and while it runs. */
  const hold = (claimed: ClaimedJob, heartbeatMs: number): LocalJob => {
    if (claimed.redelivered) deps.observer.redelivered(claimed.job.queue, 1);
    const lease = { jobId: claimed.job.id, token: claimed.job.leaseToken ?? '' };
    return { claimed, held: leases.hold(lease, claimed.job.queue, heartbeatMs, new JobAbort()) };
  };

  /**
   * One claim transaction for every queue with room; returns how many jobs were claimed and
   * whether that was fewer than asked for (the store had no more ready).
   */
  const claimPass = async (): Promise<{ claimed: number; drained: boolean }> => {
    if (stopping) return { claimed: 0, drained: true };
    const requests: ClaimRequest[] = [];
    for (const stage of stages) {
      const limit = slots.wanted(stage);
      if (limit <= 0) continue;
      const { leaseMs, maxRetriesRunning } = stage.policy;
      requests.push({ queue: stage.queue, workerId: id, limit, leaseMs, ...(maxRetriesRunning === null ? {} : { maxRetriesRunning }) });
    }
    if (requests.length === 0) return { claimed: 0, drained: false };
    const jobs = await deps.store.jobs.claim(requests);
    if (jobs.length > 0) crashPoint('after-claim');
    countClaims(jobs);
    // Claimed only from served queues, so every job has its stage.
    slots.add(jobs.map((job) => hold(job, deps.plan.byQueue(job.job.queue)?.policy.heartbeatMs ?? minHeartbeatMs)));
    dispatch();
    return { claimed: jobs.length, drained: jobs.length < requests.reduce((n, r) => n + r.limit, 0) };
  };

  /** Claims come grouped by queue (request order): one count per group. */
  const countClaims = (jobs: readonly ClaimedJob[]): void => {
    let start = 0;
    for (let i = 1; i <= jobs.length; i++) {
      const queue = jobs[start]?.job.queue;
      if (queue !== undefined && jobs[i]?.job.queue !== queue) {
        deps.observer.jobsClaimed(queue, i - start);
        start = i;
      }
    }
  };

  const sleep = async (ms: number): Promise<void> => {
    if (wokenWhileAwake) {
      wokenWhileAwake = false;
      return;
    }
    wakeSleep = new AbortController();
    await deps.clock.sleep(ms, wakeSleep.signal);
    wakeSleep = undefined;
  };

  const loop = async (): Promise<void> => {
    while (!stopping) {
      let pass = { claimed: 0, drained: true };
      const startedAt = deps.clock.now();
      try {
        pass = await claimPass();
      } catch (err) {
        logger.warn({ err }, 'claim failed; retrying after the poll interval');
      }
      if (pass.claimed === 0) {
        if (!stopping) await sleep(pollMs);
      } else if (pass.drained) {
        // The store had fewer ready jobs than this worker has room for: claiming again at once
        // would take the few that got ready meanwhile, one transaction each. Waiting as long as
        // the claim took lets them gather into one batch, so a worker spends at most about half
        // its time in claims of a shallow queue (PostgreSQL chains: fewer transactions leave the
        // server to submissions), and a claim that costs nothing (the memory store) waits nothing.
        await deps.clock.sleep(Math.min(deps.clock.now() - startedAt, pollMs));
      } else {
        // Yield one event-loop turn before the next claim, so that wakes from many submissions and
        // commits coalesce into one claim transaction with a large batch (far fewer transactions).
        await deps.clock.sleep(0);
      }
    }
  };

  const reap = async (): Promise<void> => {
    reapTimer = undefined;
    await activity.flush();
    try {
      const { redelivered } = await deps.store.jobs.reap();
      for (const [queue, count] of Object.entries(redelivered)) {
        deps.observer.redelivered(queue, count);
        logger.info({ queue, count }, 'expired leases handed back');
      }
      if ((reapTicks + 1) % reapLocksEvery === 0) {
        const reaped = await deps.store.locks.reap();
        if (reaped > 0) {
          deps.observer.staleLocksReaped(reaped);
          logger.info({ reaped }, 'stale locks reaped');
        }
      }
      if (++reapTicks % TEMP_SWEEP_EVERY === 0) {
        const removed = await deps.artifacts.collectOrphanedTemps(options.tempGraceMs ?? DEFAULT_TEMP_GRACE_MS);
        if (removed > 0) {
          deps.observer.orphanedTempsCollected(removed);
          logger.info({ removed }, 'orphaned temp files collected');
        }
        // Housekeeping only: an expired entry is never served, and is rebuilt on demand.
        const expired = await deps.store.cache.deleteExpired(CACHE_BUILD_GRACE_MS);
        if (expired > 0) logger.debug({ expired }, 'expired cache entries removed');
      }
      if (reapTicks % ARTIFACT_GC_EVERY === 0) {
        const gc = await collectArtifacts(deps, { graceMs: options.artifactGraceMs ?? DEFAULT_ARTIFACT_GRACE_MS });
        if (gc.collected.length > 0) logger.info({ removed: gc.collected.length, scanned: gc.scanned }, 'unreferenced artifacts collected');
      }
      await retention?.tick();
    } catch (err) {
      logger.warn({ err }, 'reaper pass failed');
    }
    if (!stopping) reapTimer = deps.clock.setTimer(() => void reap(), options.reapMs ?? DEFAULT_REAP_MS);
  };

  /** Aborts and releases held jobs (shutdown): ready again at once, the attempt not counted. */
  const handBack = async (held: HeldJob[], message: string): Promise<void> => {
    if (held.length === 0) return;
    for (const h of held) {
      h.abort.abort(new StageAbortError('shutdown', 'worker shutting down'));
      leases.release(h);
    }
    const released = await deps.store.jobs.release(held.map((h) => h.lease)).catch((err: unknown) => {
      logger.warn({ err }, 'could not hand jobs back; their leases will expire');
      return 0;
    });
    logger.info({ released }, message);
  };

  return {
    id,
    start() {
      if (running || stopping) return;
      running = true;
      logger.info({ queues }, 'worker started');
      loopDone = loop();
      reapTimer = deps.clock.setTimer(() => void reap(), options.reapMs ?? DEFAULT_REAP_MS);
    },
    async runOnce() {
      const { claimed } = await claimPass();
      // Jobs claimed ahead start as others finish, so wait until nothing runs or waits.
      while (executions.size > 0) await Promise.all([...executions]);
      return claimed;
    },
    inFlight: () => executions.size,
    slots: () => slots.usage(),
    async stop(graceMs = DEFAULT_SHUTDOWN_GRACE_MS) {
      if (stopping) return;
      stopping = true;
      unsubscribe();
      reapTimer?.();
      wake();
      await loopDone;
      // Jobs claimed ahead never started: hand them back now, uncounted, for other workers.
      const waiting = slots.takeWaiting().map((j) => j.held);
      await handBack(waiting, 'claimed-ahead jobs handed back');
      if (executions.size > 0) {
        const graceOver = new AbortController();
        await Promise.race([Promise.all(executions), deps.clock.sleep(graceMs, graceOver.signal)]);
        graceOver.abort();
      }
      await handBack(leases.all(), 'in-flight jobs handed back');
      await Promise.all(executions);
      await activity.flush();
      leases.stop();
      await threads.close();
      logger.info('worker stopped');
    },
  };
}
