/**
 * The `operator` sub-port of the memory store: cancel, resume, replay, pause and drain. Run
 * moves go through the core transition table so illegal ones raise `INVALID_TRANSITION`.
 */
import { ConflictError, ErrorClass, NotFoundError } from '../../core/errors.ts';
import type { Job, Run, StageErrorRecord } from '../../core/model.ts';
import { JobKind, JobState, RunStatus, StageStatus } from '../../core/model.ts';
import type { OperatorPort } from '../../core/ports/operator.ts';
import { assertReplayable, assertTransition, isTerminal } from '../../core/run/transitions.ts';
import type { MemoryContext } from './context.ts';
import type { MemoryState } from './state.ts';

/** The error a cancelled run carries. */
function cancelledError(reason: string): StageErrorRecord {
  return { class: ErrorClass.permanent, code: 'CANCELLED', message: reason };
}

/** Makes a parked or dead job ready now as a fresh start, and its run `running` at its stage. */
function restartJob(state: MemoryState, job: Job, run: Run, now: number): void {
  job.state = JobState.ready;
  job.attempt = 0;
  job.availableAt = now;
  state.jobChanged(job);
  if (job.kind === JobKind.stage) state.stageRecord(run.id, job.stage).status = StageStatus.pending;
  run.status = RunStatus.running;
  run.currentStage = job.stage;
  run.updatedAt = now;
  state.pendingWakes.add(job.queue);
}

/** Cancels a run that has not ended; its jobs are deleted and unfinished stages skipped. */
function cancelRun(state: MemoryState, runId: string, reason: string): Run {
  const now = state.clock.now();
  const run = state.requireRun(runId);
  assertTransition(run.id, run.status, RunStatus.cancelled);
  state.endRun(run, RunStatus.cancelled, cancelledError(reason), now);
  return run;
}

/** Parked run -> running; its parked job -> ready now with `attempt = 0`. */
function resumeRun(state: MemoryState, runId: string): Run {
  const now = state.clock.now();
  const run = state.requireRun(runId);
  const job = state.jobsOfRun(run.id).find((j) => j.state === JobState.parked);
  // `running -> running` is a legal internal move, so "only parked runs resume" is checked here.
  if (run.status !== RunStatus.parked || !job) {
    throw new ConflictError('INVALID_TRANSITION', `run ${run.id} is ${run.status} and cannot be resumed`, {
      details: { runId: run.id, from: run.status, to: RunStatus.running },
    });
  }
  assertTransition(run.id, run.status, RunStatus.running);
  restartJob(state, job, run, now);
  return run;
}

/**
 * Dead job of a dead-lettered run -> ready now with `attempt = 0`; its run `running` again with
 * no error. A run that failed permanently or was compensated is not replayed.
 */
function replayJob(state: MemoryState, jobId: string): Job {
  const now = state.clock.now();
  const job = state.jobs.get(jobId);
  if (!job) throw new NotFoundError('job', jobId);
  if (job.state !== JobState.dead) {
    throw new ConflictError('INVALID_TRANSITION', `job ${job.id} is ${job.state}; only dead jobs can be replayed`, {
      details: { jobId: job.id, state: job.state },
    });
  }
  const run = state.requireRun(job.runId);
  if (state.isCompensating(run.id)) {
    throw new ConflictError('RUN_COMPENSATED', `run ${run.id} was rolled back; submit a new run instead`, {
      details: { runId: run.id, jobId: job.id },
    });
  }
  assertReplayable(run.id, run.status, job.id);
  restartJob(state, job, run, now);
  run.error = null;
  run.finishedAt = null;
  return job;
}

/** Pauses or resumes a queue; a resumed queue gets a wake hint. */
function setQueuePaused(state: MemoryState, queue: string, paused: boolean): void {
  state.queuePaused.set(queue, paused);
  if (!paused) state.pendingWakes.add(queue);
}

/** Removes the queue's ready jobs and cancels their runs; leased jobs are left to finish. */
function drainQueue(state: MemoryState, queue: string): number {
  const now = state.clock.now();
  const ready = [...state.jobs.values()].filter((j) => j.queue === queue && j.state === JobState.ready);
  for (const job of ready) {
    state.deleteJob(job.id);
    const run = state.requireRun(job.runId);
    // A run with two ready jobs here is cancelled once; a terminal run only loses the job.
    if (!isTerminal(run.status)) state.endRun(run, RunStatus.cancelled, cancelledError('queue drained'), now);
  }
  return ready.length;
}

/** The operator actions on the state. */
export function createOperatorPort(ctx: MemoryContext): OperatorPort {
  const { state } = ctx;
  return {
    cancelRun: ctx.atomic((runId, reason) => cancelRun(state, runId, reason)),
    resumeRun: ctx.atomic((runId) => resumeRun(state, runId)),
    replayJob: ctx.atomic((jobId) => replayJob(state, jobId)),
    setQueuePaused: ctx.atomic((queue, paused) => setQueuePaused(state, queue, paused)),
    drainQueue: ctx.atomic((queue) => drainQueue(state, queue)),
  };
}
