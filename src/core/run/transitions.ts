/**
 * The run state machine as a transition table. Stores apply these moves inside their
 * transactions; operator actions that ask for a move not listed here get `INVALID_TRANSITION`.
 */
import { ConflictError } from '../errors.ts';
import { RunStatus } from '../model.ts';

/** For each status, the statuses a run may move to next. */
export const RUN_TRANSITIONS: Readonly<Record<RunStatus, readonly RunStatus[]>> = Object.freeze({
  queued: ['running', 'cancelled', 'superseded'],
  // running -> failed: a permanent failure (of a stage or a compensation), or the last compensation
  // of a permanently failed run completing.
  running: ['succeeded', 'failed', 'dead_lettered', 'parked', 'cancelled', 'superseded', 'running'],
  parked: ['running', 'cancelled', 'superseded'],
  // dead_lettered -> parked: a compensation of a dead-lettered run failed for good and waits for an
  // operator (resume runs it again; the last compensation to complete ends the run failed).
  dead_lettered: ['running', 'failed', 'parked', 'cancelled', 'superseded'],
  succeeded: [],
  failed: [],
  cancelled: [],
  superseded: [],
});

/** True when a run in `from` may move to `to`. */
export function canTransition(from: RunStatus, to: RunStatus): boolean {
  return RUN_TRANSITIONS[from].includes(to);
}

/** Throws `ConflictError(INVALID_TRANSITION)` unless a run in `from` may move to `to`. */
export function assertTransition(runId: string, from: RunStatus, to: RunStatus): void {
  if (!canTransition(from, to)) {
    throw new ConflictError('INVALID_TRANSITION', `run ${runId} is ${from} and cannot become ${to}`, {
      details: { runId, from, to },
    });
  }
}

/**
 * Throws `ConflictError(INVALID_TRANSITION)` unless the dead job `jobId` of a run in `status` may
 * be replayed: never for a run that ended `failed` (a permanent failure: running the job again
 * cannot succeed, so a new run must be submitted), nor for a run that may not become `running`.
 */
export function assertReplayable(runId: string, status: RunStatus, jobId: string): void {
  if (status === RunStatus.failed) {
    throw new ConflictError('INVALID_TRANSITION', `run ${runId} failed permanently; job ${jobId} cannot be replayed, submit a new run instead`, {
      details: { runId, jobId, from: status, to: RunStatus.running },
    });
  }
  assertTransition(runId, status, RunStatus.running);
}

/** True when a run has ended and nothing will move it again by itself. */
export function isTerminal(status: RunStatus): boolean {
  return RUN_TRANSITIONS[status].length === 0;
}

export { RunStatus };
