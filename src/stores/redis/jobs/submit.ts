/**
 * `jobs.submit` of the Redis store: the batch checked on its own here (first job among the
 * stages), then ONE call of routines/jobs-submit.lua with a run id and a job id per request.
 */
import type { SubmitRunRequest, SubmitRunResult } from '../../../core/ports/jobs.ts';
import { assertSubmittable } from '../../shared/submit-checks.ts';
import type { RedisContext } from '../context.ts';
import { runFrom, toJson, type FlatHash } from '../rows.ts';
import { TERMINAL_STATUSES, scriptJobSpec, wakeAfter, type Woken } from './scripts.ts';

interface SubmitAnswer extends Woken {
  results: { created: boolean; run: FlatHash }[];
}

/** One request as the script takes it (undefined fields left out: cjson would read null as a value). */
function requestJson(ctx: RedisContext, request: SubmitRunRequest): Record<string, unknown> {
  const runId = ctx.ids.next('run');
  return {
    runId,
    pipeline: request.pipeline,
    pipelineVersion: String(request.pipelineVersion),
    input: toJson(request.input),
    inputChecksum: request.inputChecksum,
    stages: request.stages,
    idempotencyKey: request.idempotencyKey,
    subjectId: request.subjectId,
    subjectVersion: request.subjectVersion === undefined ? undefined : String(request.subjectVersion),
    tenant: request.tenant,
    traceId: request.traceId,
    traceParent: request.traceParent,
    first: scriptJobSpec(ctx, request.firstJob, runId),
  };
}

/** Submits the requests in order, all or nothing (see `JobsPort.submit`). */
export async function submitRuns(ctx: RedisContext, requests: readonly SubmitRunRequest[]): Promise<SubmitRunResult[]> {
  if (requests.length === 0) return [];
  assertSubmittable(requests);
  const batch = requests.map((request) => requestJson(ctx, request));
  const answer = await ctx.call<SubmitAnswer>('jobs-submit', [JSON.stringify(batch), TERMINAL_STATUSES]);
  wakeAfter(ctx, answer);
  return answer.results.map((result) => ({ run: runFrom(result.run), created: result.created }));
}
