/**
 * Operator actions for the memory backend: cancel, resume, replay, pause and drain. Run moves
 * go through the core transition table so illegal ones raise `INVALID_TRANSITION`.
 */
import { ConflictError, ErrorClass, NotFoundError } from '../../core/errors.ts';
import type { Job, Run, StageErrorRecord } from '../../core/model.ts';
import { JobKind, JobState, RunStatus, StageStatus } from '../../core/model.ts';
import { assertReplayable, assertTransition, isTerminal } from '../../core/run/transitions.ts';
import type { MemoryStore } from './store.ts';

/** The error a cancelled run carries. */
function cancelledError(reason: string): StageErrorRecord {
  return { class: ErrorClass.permanent, code: 'CANCELLED', message: reason };
}

/** Makes a parked or dead job ready now as a fresh start, and its run `running` at its stage. */
function restartJob(store: MemoryStore, job: Job, run: Run, now: number): void {
  job.state = JobState.ready;
  job.attempt = 0;
  job.availableAt = now;
  if (job.kind === JobKind.stage) store.stageRecord(run.id, job.stage).status = StageStatus.pending;
  run.status = RunStatus.running;
  run.currentStage = job.stage;
  run.updatedAt = now;
  store.pendingWakes.add(job.queue);
}

/** Cancels a run that has not ended; its jobs are deleted and unfinished stages skipped. */
export function cancelRun(store: MemoryStore, runId: string, reason: string): Run {
  const now = store.clock.now();
  const run = store.requireRun(runId);
  assertTransition(run.id, run.status, RunStatus.cancelled);
  store.endRun(run, RunStatus.cancelled, cancelledError(reason), now);
  return run;
}

/** Parked run -> running; its parked job -> ready now with `attempt = 0`. */
export function resumeRun(store: MemoryStore, runId: string): Run {
  const now = store.clock.now();
  const run = store.requireRun(runId);
  const job = store.jobsOfRun(run.id).find((j) => j.state === JobState.parked);
  // `running -> running` is a legal internal move, so "only parked runs resume" is checked here.
  if (run.status !== RunStatus.parked || !job) {
    throw new ConflictError('INVALID_TRANSITION', `run ${run.id} is ${run.status} and cannot be resumed`, {
      details: { runId: run.id, from: run.status, to: RunStatus.running },
    });
  }
  assertTransition(run.id, run.status, RunStatus.running);
  restartJob(store, job, run, now);
  return run;
}

/**
 * Dead job of a dead-lettered run -> ready now with `attempt = 0`; its run `running` again with
 * no error. A run that failed permanently or was compensated is not replayed.
 */
export function replayJob(store: MemoryStore, jobId: string): Job {
  const now = store.clock.now();
  const job = store.jobs.get(jobId);
  if (!job) throw new NotFoundError('job', jobId);
  if (job.state !== JobState.dead) {
    throw new ConflictError('INVALID_TRANSITION', `job ${job.id} is ${job.state}; only dead jobs can be replayed`, {
      details: { jobId: job.id, state: job.state },
    });
  }
  const run = store.requireRun(job.runId);
  if (store.isCompensating(run.id)) {
    throw new ConflictError('RUN_COMPENSATED', `run ${run.id} was rolled back; submit a new run instead`, {
      details: { runId: run.id, jobId: job.id },
    });
  }
  assertReplayable(run.id, run.status, job.id);
  restartJob(store, job, run, now);
  run.error = null;
  run.finishedAt = null;
  return job;
}

/** Pauses or resumes a queue; a resumed queue gets a wake hint. */
export function setQueuePaused(store: MemoryStore, queue: string, paused: boolean): void {
  store.queuePaused.set(queue, paused);
  if (!paused) store.pendingWakes.add(queue);
}

/** Removes the queue's ready jobs and cancels their runs; leased jobs are left to finish. */
export function drainQueue(store: MemoryStore, queue: string): number {
  const now = store.clock.now();
  const ready = [...store.jobs.values()].filter((j) => j.queue === queue && j.state === JobState.ready);
  for (const job of ready) {
    store.deleteJob(job.id);
    const run = store.requireRun(job.runId);
    // A run with two ready jobs here is cancelled once; a terminal run only loses the job.
    if (!isTerminal(run.status)) store.endRun(run, RunStatus.cancelled, cancelledError('queue drained'), now);
  }
  return ready.length;
}
