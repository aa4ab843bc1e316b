/**
 * `jobs.claim` of the Redis store: ONE call of routines/jobs-claim.lua for every request, with
 * the random part of the lease tokens it hands out.
 */
import type { JsonValue } from '../../../core/model.ts';
import type { ClaimRequest, ClaimedJob } from '../../../core/ports/jobs.ts';
import type { RedisContext } from '../context.ts';
import { jobFrom, listOf, runFrom, type FlatHash } from '../rows.ts';

interface ClaimAnswer {
  job: FlatHash;
  run: FlatHash;
  /** Flat [stage, output JSON text, ...]; `{}` when empty (cjson). */
  outputs: string[] | Record<string, never>;
  ledger: string | false;
  exhausted: boolean;
  redelivered: boolean;
}

function claimedFrom(answer: ClaimAnswer): ClaimedJob {
  const outputs: Record<string, JsonValue> = {};
  const flat = listOf(answer.outputs);
  for (let i = 0; i + 1 < flat.length; i += 2) outputs[flat[i] as string] = JSON.parse(flat[i + 1] as string) as JsonValue;
  return {
    job: jobFrom(answer.job),
    run: runFrom(answer.run),
    outputs,
    ...(answer.ledger === false ? {} : { ledgerOutput: JSON.parse(answer.ledger) as JsonValue }),
    exhausted: answer.exhausted,
    redelivered: answer.redelivered,
  };
}

/** Claims from every requested queue in one script, grouped in request order. */
export async function claimJobs(ctx: RedisContext, requests: readonly ClaimRequest[]): Promise<ClaimedJob[]> {
  const wanted = requests.filter((r) => r.limit > 0);
  if (wanted.length === 0) return [];
  const batch = wanted.map((r) => ({ queue: r.queue, workerId: r.workerId, limit: String(Math.floor(r.limit)), leaseMs: String(r.leaseMs) }));
  // One random token per call; the script gives each claimed job `<token>.<n>`: unique (a new
  // random part per call), and unguessable by anyone but the claimer, who holds them all. A
  // token per possible job would cost the client and the script `limit` random strings per
  // queue for the few jobs a claim usually gets.
  const answer = await ctx.call<ClaimAnswer[] | Record<string, never>>('jobs-claim', [JSON.stringify(batch), ctx.ids.token()]);
  return listOf(answer).map(claimedFrom);
}
