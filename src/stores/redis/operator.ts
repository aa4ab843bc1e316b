/**
 * The `operator` sub-port of the Redis store: cancel, resume, replay, pause and drain, each ONE
 * script call (routines/operator-*.lua). Run moves are checked in the scripts against the
 * statuses core's transition table allows, passed in so the table stays defined once.
 */
import { ErrorClass } from '../../core/errors.ts';
import type { Job, Run } from '../../core/model.ts';
import type { OperatorPort } from '../../core/ports/operator.ts';
import type { RedisContext } from './context.ts';
import { TERMINAL_STATUSES, errorText, statusesInto, wakeAfter, type Woken } from './jobs/scripts.ts';
import { jobFrom, runFrom, type FlatHash } from './rows.ts';

const CANCEL_FROM = statusesInto('cancelled');
const RUN_FROM = statusesInto('running');

/** The error a cancelled run carries, as JSON text. */
function cancelledError(reason: string): string {
  return errorText({ class: ErrorClass.permanent, code: 'CANCELLED', message: reason });
}

/** The operator actions over the context's scripts. */
export function createOperatorPort(ctx: RedisContext): OperatorPort {
  return ctx.port<OperatorPort>({
    async cancelRun(runId, reason): Promise<Run> {
      return runFrom(await ctx.call<FlatHash>('operator-cancel-run', [runId, cancelledError(reason), CANCEL_FROM]));
    },
    async resumeRun(runId): Promise<Run> {
      const answer = await ctx.call<Woken & { run: FlatHash }>('operator-resume-run', [runId]);
      wakeAfter(ctx, answer);
      return runFrom(answer.run);
    },
    async replayJob(jobId): Promise<Job> {
      const answer = await ctx.call<Woken & { job: FlatHash }>('operator-replay-job', [jobId, RUN_FROM]);
      wakeAfter(ctx, answer);
      return jobFrom(answer.job);
    },
    async setQueuePaused(queue, paused): Promise<void> {
      await ctx.call('operator-set-queue-paused', [queue, paused ? '1' : '0']);
      // A resumed queue may have jobs waiting.
      if (!paused) ctx.wake([queue]);
    },
    async drainQueue(queue): Promise<number> {
      return ctx.call<number>('operator-drain-queue', [queue, cancelledError('queue drained'), TERMINAL_STATUSES]);
    },
  });
}
