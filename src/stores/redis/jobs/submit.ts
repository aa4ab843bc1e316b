/**
 * `jobs.submit` of the Redis store: the batch checked on its own here (first job among the
 * stages), then ONE call of routines/jobs-submit.lua with a run id and a job id per request, as
 * flat arguments; a run created live comes back as a flag only (this side built every field of
 * it but the time), any other run as its stored hash.
 */
import type { JsonValue } from '../../../core/model.ts';
import type { SubmitAdmission, SubmitRunRequest, SubmitRunResult } from '../../../core/ports/jobs.ts';
import { newRun } from '../../shared/new-run.ts';
import { assertSubmittable } from '../../shared/submit-checks.ts';
import type { RedisContext } from '../context.ts';
import { runFrom, toJson } from '../rows.ts';
import { TERMINAL_STATUSES, scriptJobSpec } from './scripts.ts';

/** The optional request fields, in the order the script writes them. */
const OPTIONAL = ['idempotencyKey', 'subjectId', 'subjectVersion', 'tenant', 'traceId', 'traceParent'] as const;

/** Appends a request's admission fields as the script reads them: their count, then name, value pairs. */
function pushAdmission(args: string[], admission: SubmitAdmission | undefined): void {
  if (admission === undefined) {
    args.push('0');
    return;
  }
  const { refuse, maxInFlightRuns, maxBacklog, retryAfterMs } = admission;
  const fields: [string, number | string | undefined][] = [
    ['refuse', refuse?.code],
    ['refuseAfterMs', refuse?.retryAfterMs],
    ['maxInFlightRuns', maxInFlightRuns],
    ['maxBacklog', maxBacklog],
    ['retryAfterMs', retryAfterMs],
  ];
  const given = fields.filter((f): f is [string, number | string] => f[1] !== undefined);
  args.push(String(given.length), ...given.flatMap(([name, value]) => [name, String(value)]));
}

/** Appends one request as the script reads it (see jobs-submit.lua's header); returns its run id and input text. */
function pushRequest(ctx: RedisContext, args: string[], request: SubmitRunRequest): { runId: string; input: string } {
  const runId = ctx.ids.next('run');
  const input = toJson(request.input);
  args.push(runId, request.pipeline, String(request.pipelineVersion), input, request.inputChecksum);
  const countAt = args.length;
  args.push('0');
  let count = 0;
  for (const name of OPTIONAL) {
    const value = request[name];
    if (value === undefined) continue;
    args.push(name, String(value));
    count++;
  }
  args[countAt] = String(count);
  args.push(String(request.stages.length), ...request.stages);
  const first = scriptJobSpec(ctx, request.firstJob, runId);
  args.push(first.id, first.stage, first.queue, first.kind, first.maxAttempts, first.priority, first.key);
  pushAdmission(args, request.admission);
  return { runId, input };
}

/** Submits the requests in order, all or nothing (see `JobsPort.submit`). */
export async function submitRuns(ctx: RedisContext, requests: readonly SubmitRunRequest[]): Promise<SubmitRunResult[]> {
  if (requests.length === 0) return [];
  assertSubmittable(requests);
  const args: string[] = [TERMINAL_STATUSES, ctx.wakeOrigin];
  const sent = requests.map((request) => pushRequest(ctx, args, request));
  const reply = await ctx.callReply<string[]>('jobs-submit', args);
  const now = Number(reply[0]);
  const woken = Number(reply[1]);
  // The script published the wake to other processes (publish_wake).
  if (woken > 0) ctx.wakeLocal(reply.slice(2, 2 + woken));
  let at = 2 + woken;
  return requests.map((request, i): SubmitRunResult => {
    const flag = reply[at++];
    if (flag === '1') {
      const { runId, input } = sent[i] as { runId: string; input: string };
      return { run: newRun(runId, request, now, JSON.parse(input) as JsonValue), created: true };
    }
    const length = Number(reply[at++]);
    const run = runFrom(reply.slice(at, at + length));
    at += length;
    return { run, created: flag === '2' };
  });
}
