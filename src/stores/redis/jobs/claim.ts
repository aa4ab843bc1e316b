/**
 * `jobs.claim` of the Redis store: ONE call of routines/jobs-claim.lua for every request, with
 * the random part of the lease tokens it hands out. The script answers one flat native array (no
 * JSON on either side): the fields below by position, in the order of its JOB_READ and RUN_READ.
 */
import type { Job, JobKind, JobState, JsonValue, Run, RunStatus, StageErrorRecord } from '../../../core/model.ts';
import type { ClaimRequest, ClaimedJob } from '../../../core/ports/jobs.ts';
import type { RedisContext } from '../context.ts';

/** The script's answer: text, null for an absent field. */
type Reply = readonly (string | null)[];

/** Reads a claim answer front to back. */
class Cursor {
  private at = 0;
  constructor(private readonly reply: Reply) {}
  get done(): boolean {
    return this.at >= this.reply.length;
  }
  text(): string | null {
    return this.reply[this.at++] ?? null;
  }
  required(): string {
    const value = this.text();
    if (value === null) throw new Error('redis store: claim answer lacks a field');
    return value;
  }
  number(): number | null {
    const value = this.text();
    return value === null ? null : Number(value);
  }
  json<T = JsonValue>(): T | null {
    const value = this.text();
    return value === null ? null : (JSON.parse(value) as T);
  }
}

/** One claimed job off the cursor (see the script's Result). */
function claimedFrom(c: Cursor): ClaimedJob {
  const id = c.required();
  const runId = c.required();
  const pipeline = c.required();
  const stage = c.required();
  const queue = c.required();
  const kind = c.required() as JobKind;
  const idempotencyKey = c.required();
  const attempt = Number(c.required());
  const maxAttempts = Number(c.required());
  const priority = Number(c.required());
  const availableAt = Number(c.required());
  const enqueuedAt = Number(c.required());
  const tenant = c.text();
  const traceId = c.text();
  const redeliveries = Number(c.required());
  const lastError = c.json<StageErrorRecord>();
  const lockWaitSince = c.number();
  const job: Job = {
    id, runId, pipeline, stage, queue, kind, state: 'leased' satisfies JobState, idempotencyKey, attempt, maxAttempts, priority, availableAt, enqueuedAt,
    tenant, traceId, leaseOwner: c.text(), leaseToken: c.text(), fence: c.number(), leaseUntil: c.number(), leaseMs: c.number(),
    redeliveries, lastError, lockWaitSince,
  };
  const redelivered = c.required() === '1';
  const run: Run = {
    id: c.required(),
    pipeline: c.required(),
    pipelineVersion: Number(c.required()),
    status: c.required() as RunStatus,
    currentStage: c.text(),
    input: c.json(),
    inputChecksum: c.required(),
    idempotencyKey: c.text(),
    subjectId: c.text(),
    subjectVersion: c.number(),
    tenant: c.text(),
    traceId: c.text(),
    traceParent: c.text(),
    error: c.json<StageErrorRecord>(),
    createdAt: Number(c.required()),
    updatedAt: Number(c.required()),
    finishedAt: c.number(),
  };
  const ledger = c.text();
  const outputs: Record<string, JsonValue> = {};
  for (let i = Number(c.required()); i > 0; i -= 2) outputs[c.required()] = c.json() as JsonValue;
  return {
    job,
    run,
    outputs,
    ...(ledger === null ? {} : { ledgerOutput: JSON.parse(ledger) as JsonValue }),
    exhausted: attempt > maxAttempts,
    redelivered,
  };
}

/** Claims from every requested queue in one script, grouped in request order. */
export async function claimJobs(ctx: RedisContext, requests: readonly ClaimRequest[]): Promise<ClaimedJob[]> {
  const args: string[] = [];
  for (const r of requests) {
    if (r.limit <= 0) continue;
    const cap = r.maxRetriesRunning === undefined ? '' : String(Math.max(0, Math.floor(r.maxRetriesRunning)));
    args.push(r.queue, r.workerId, String(Math.floor(r.limit)), String(r.leaseMs), cap);
  }
  if (args.length === 0) return [];
  // One random token per call; the script gives each claimed job `<token>.<n>`: unique (a new
  // random part per call), and unguessable by anyone but the claimer, who holds them all. A
  // token per possible job would cost the client and the script `limit` random strings per
  // queue for the few jobs a claim usually gets.
  const cursor = new Cursor(await ctx.callReply<Reply>('jobs-claim', [ctx.ids.token(), ...args]));
  const claimed: ClaimedJob[] = [];
  while (!cursor.done) claimed.push(claimedFrom(cursor));
  return claimed;
}
