/**
 * The run state machine as a transition table. Backends apply these moves inside their
 * transactions; operator actions that ask for a move not listed here get `INVALID_TRANSITION`.
 */
import { ConflictError } from '../errors.ts';
import { RunStatus } from '../model.ts';

/** For each status, the statuses a run may move to next. */
export const RUN_TRANSITIONS: Readonly<Record<RunStatus, readonly RunStatus[]>> = Object.freeze({
  queued: ['running', 'cancelled', 'superseded'],
  running: ['succeeded', 'dead_lettered', 'parked', 'cancelled', 'superseded', 'running'],
  parked: ['running', 'cancelled', 'superseded'],
  dead_lettered: ['running', 'failed', 'cancelled', 'superseded'],
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

/** True when a run has ended and nothing will move it again by itself. */
export function isTerminal(status: RunStatus): boolean {
  return RUN_TRANSITIONS[status].length === 0;
}

export { RunStatus };
