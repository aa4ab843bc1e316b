/**
 * Idempotency keys of jobs. Every store builds them here, so the same logical effect has the
 * same key whatever store holds it (the ledger and the unique live-job index are keyed by it).
 */
import { JobKind } from './model.ts';

/**
 * The key of the job that runs `stage` of `runId`: `<runId>:<stage>` for a stage job,
 * `<runId>:<stage>:rollback` for its compensation.
 */
export function jobIdempotencyKey(runId: string, stage: string, kind: JobKind): string {
  return kind === JobKind.rollback ? `${runId}:${stage}:rollback` : `${runId}:${stage}`;
}
