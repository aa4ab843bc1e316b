/**
 * Shared set-up of the store conformance suite: the harness contract, a per-test fresh store
 * on a fake clock, and the builders and steps the sub-port suites share (runs, claims, commits,
 * publications, cache entries). Everything here goes through the Store port only.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { contentHash } from '../../src/core/canonical.ts';
import type { FakeClock } from '../../src/core/clock.ts';
import { createFakeClock } from '../../src/core/clock.ts';
import type { PipelineError } from '../../src/core/errors.ts';
import type { IdGenerator } from '../../src/core/ids.ts';
import { createIdGenerator } from '../../src/core/ids.ts';
import type { JsonValue, Run, StageErrorRecord } from '../../src/core/model.ts';
import type { CacheAcquireRequest, CacheAcquireResult, CacheCompleteRequest, CacheEntry } from '../../src/core/ports/cache.ts';
import type {
  ClaimRequest,
  ClaimedJob,
  CommitResult,
  CompleteStageRequest,
  FailStageRequest,
  FailureDecision,
  JobSpec,
  LeaseRef,
  SubmitRunRequest,
  SubmitRunResult,
} from '../../src/core/ports/jobs.ts';
import type { PublicationRequest } from '../../src/core/ports/publications.ts';
import type { Store, MigrationResult } from '../../src/core/ports/store.ts';

/** How the suite gets and disposes of a store under test. */
export interface StoreHarness {
  /**
   * A store over a fresh, empty store (no migrations applied yet: the suite calls
   * `migrate()`), using `clock` for all of its time and `ids` for ids and lease tokens.
   */
  create(ctx: { clock: FakeClock; ids: IdGenerator }): Promise<Store>;
  /** Closes the store and removes whatever `create` made (files, schemas). */
  destroy(store: Store): Promise<void>;
}

/** What each test receives: its own store, already migrated once. */
export interface SuiteContext {
  store: Store;
  clock: FakeClock;
  ids: IdGenerator;
  /** Result of the suite's own first `migrate()` call. */
  migration: MigrationResult;
}

/** What a test of an unmigrated store receives. */
export type UnmigratedContext = Omit<SuiteContext, 'migration'>;

/** Declares one test that runs on a fresh store. */
export type SuiteTest = (name: string, fn: (ctx: SuiteContext) => Promise<void>) => void;

/** Declares one test that runs on a fresh store nobody has migrated yet. */
export type UnmigratedTest = (name: string, fn: (ctx: UnmigratedContext) => Promise<void>) => void;

/** Returns a `test` function whose every test gets a fresh store, not migrated, destroyed after. */
export function unmigratedStoreTest(harness: StoreHarness): UnmigratedTest {
  return (name, fn) => {
    it(name, async () => {
      const clock = createFakeClock();
      const ids = createIdGenerator(clock);
      const store = await harness.create({ clock, ids });
      try {
        await fn({ store, clock, ids });
      } finally {
        await harness.destroy(store);
      }
    });
  };
}

/** Returns a `test` function whose every test gets a fresh, migrated store, destroyed after. */
export function storeTest(harness: StoreHarness): SuiteTest {
  const test = unmigratedStoreTest(harness);
  return (name, fn) => test(name, async (ctx) => fn({ ...ctx, migration: await ctx.store.migrate() }));
}

/** The pipeline most tests use: `demo` with stages a -> b -> c on queues `demo.<stage>`. */
export const PIPELINE = 'demo';
/** Stages of {@link PIPELINE}, in order. */
export const STAGES: readonly string[] = ['a', 'b', 'c'];
/** Lease granted by default claims. */
export const LEASE_MS = 30_000;

/** A stage job spec of `demo` (or `pipeline`). */
export function stageJob(stage: string, overrides: Partial<JobSpec> & { pipeline?: string } = {}): JobSpec {
  const { pipeline = PIPELINE, ...rest } = overrides;
  return { stage, queue: `${pipeline}.${stage}`, kind: 'stage', maxAttempts: 3, priority: 0, ...rest };
}

/** Submission overrides that put a run on pipeline `name`: its first job on queue `<name>.a`. */
export function onPipeline(name: string): { pipeline: string; firstJob: JobSpec } {
  return { pipeline: name, firstJob: stageJob('a', { pipeline: name }) };
}

/** A rollback job spec of `demo`, on the stage's own queue. */
export function rollbackJob(stage: string): JobSpec {
  return { ...stageJob(stage), kind: 'rollback' };
}

let inputCounter = 0;

/** A submission of `demo` with a unique input, unless overridden. */
export function runRequest(overrides: Partial<SubmitRunRequest> = {}): SubmitRunRequest {
  const input: JsonValue = overrides.input ?? { n: ++inputCounter };
  return {
    pipeline: PIPELINE,
    pipelineVersion: 1,
    input,
    inputChecksum: contentHash(input),
    stages: STAGES,
    firstJob: stageJob(STAGES[0] ?? 'a'),
    ...overrides,
  };
}

/** Submits one request alone: `jobs.submit` with a single request. */
export async function submitOne(store: Store, request: SubmitRunRequest): Promise<SubmitRunResult> {
  const results = await store.jobs.submit([request]);
  assert.equal(results.length, 1, 'submit returns one result per request');
  return results[0] as SubmitRunResult;
}

/** Submits a run of `demo` (see {@link runRequest}) alone and returns it. */
export async function submit(store: Store, overrides: Partial<SubmitRunRequest> = {}): Promise<Run> {
  return (await submitOne(store, runRequest(overrides))).run;
}

/** Claims from one queue: `jobs.claim` with a single request. */
export async function claim(store: Store, request: ClaimRequest): Promise<ClaimedJob[]> {
  return store.jobs.claim([request]);
}

/** Commits one completion alone: `commit` with a single `complete` item. */
export async function complete(store: Store, request: CompleteStageRequest): Promise<CommitResult> {
  const [result] = await store.jobs.commit([{ type: 'complete', ...request }]);
  assert.ok(result, 'commit returns one result per item');
  return result;
}

/** Commits one failure alone: `commit` with a single `fail` item. */
export async function fail(store: Store, request: FailStageRequest): Promise<CommitResult> {
  const [result] = await store.jobs.commit([{ type: 'fail', ...request }]);
  assert.ok(result, 'commit returns one result per item');
  return result;
}

/** Claims exactly one job from `queue` (asserting there was one). */
export async function claimOne(
  store: Store,
  queue = 'demo.a',
  options: { workerId?: string; leaseMs?: number } = {},
): Promise<ClaimedJob> {
  const claimed = await claim(store, {
    queue,
    workerId: options.workerId ?? 'w1',
    limit: 1,
    leaseMs: options.leaseMs ?? LEASE_MS,
  });
  assert.equal(claimed.length, 1, `expected one job on ${queue}`);
  return claimed[0] as ClaimedJob;
}

/** The lease a claim granted. */
export function leaseOf(claimed: ClaimedJob): LeaseRef {
  assert.ok(claimed.job.leaseToken, 'a claimed job carries a lease token');
  return { jobId: claimed.job.id, token: claimed.job.leaseToken };
}

/**
 * Claims the job of `stage` from its queue and completes it with `output`, enqueueing the stage
 * named `next` (or ending the run with null).
 */
export async function passStage(
  store: Store,
  stage: string,
  next: string | null,
  output: JsonValue = { done: stage },
): Promise<ClaimedJob> {
  const claimed = await claimOne(store, `${PIPELINE}.${stage}`);
  const result = await complete(store, {
    lease: leaseOf(claimed),
    output,
    durationMs: 5,
    next: next === null ? null : stageJob(next),
  });
  assert.equal(result.outcome, 'committed');
  return claimed;
}

/**
 * Submits a run of `demo`, completes each stage before `stage` with `output` (see
 * {@link passStage}) and claims the job of `stage`: a fresh lease, its fence above every fence
 * issued before.
 */
export async function claimNew(store: Store, stage = 'a', output?: JsonValue): Promise<ClaimedJob> {
  assert.ok(STAGES.includes(stage), `${stage} is a stage of ${PIPELINE}`);
  await submit(store);
  const earlier = STAGES.slice(0, STAGES.indexOf(stage));
  for (const [i, done] of earlier.entries()) await passStage(store, done, STAGES[i + 1] ?? null, output ?? { done });
  return claimOne(store, `${PIPELINE}.${stage}`);
}

/** Commits a failed attempt of `claimed` (1 ms long) with `decision`, asserting it committed. */
export async function failJob(
  store: Store,
  claimed: ClaimedJob,
  decision: FailureDecision,
  error: StageErrorRecord = failure('transient'),
): Promise<CommitResult> {
  const result = await fail(store, { lease: leaseOf(claimed), error, durationMs: 1, decision });
  assert.equal(result.outcome, 'committed');
  return result;
}

/** A recorded failure of the given class. */
export function failure(errorClass: StageErrorRecord['class'], code = 'STAGE_FAILED'): StageErrorRecord {
  return { class: errorClass, code, message: `${errorClass} failure` };
}

/** Everything a commit could change for one run and job, to compare before/after. */
export async function snapshot(store: Store, runId: string, jobId: string): Promise<unknown> {
  return {
    run: await store.reads.getRun(runId),
    job: await store.reads.getJob(jobId),
    jobs: await store.reads.listJobs({ runId, limit: 100 }),
    ledger: await store.reads.readLedger(runId),
  };
}

/** Asserts that `promise` rejects with an instance of `errorClass` carrying `code`. */
export async function assertRejectsWith(
  promise: Promise<unknown>,
  errorClass: abstract new (...args: never[]) => PipelineError,
  code: string,
): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof errorClass, `expected ${errorClass.name}, got ${String(err)}`);
    assert.equal(err.code, code);
    return true;
  });
}

/** Lets pending callbacks (microtasks, immediates) run; never waits on wall-clock time. */
export async function settle(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A distinct, well-formed artifact ref: `sha256:` and `n` as 64 lowercase hex digits (sorts as `n`). */
export function art(n: number): string {
  return `sha256:${n.toString(16).padStart(64, '0')}`;
}

/** Submits a run of `demo`, claims its first job and commits `publish` with its completion, none refused. */
export async function publish(store: Store, requests: readonly PublicationRequest[]): Promise<void> {
  const claimed = await claimNew(store);
  const result = await complete(store, { lease: leaseOf(claimed), output: { ok: true }, durationMs: 1, next: null, publish: requests });
  assert.equal(result.outcome, 'committed');
  assert.equal(result.outcome === 'committed' ? (result.publicationsRefused ?? 0) : -1, 0);
}

/** The cache most cache tests use. */
export const CACHE = 'render';
/** Builder lease of the default acquire. */
export const BUILD_LEASE_MS = 10_000;
/** Freshness of the default completion. */
export const TTL_MS = 60_000;

/** An acquire of `(CACHE, key)` by the caller holding `token`. */
export function acquireRequest(key: string, token: string, overrides: Partial<CacheAcquireRequest> = {}): CacheAcquireRequest {
  return { cache: CACHE, key, owner: `owner-${token}`, token, leaseMs: BUILD_LEASE_MS, ...overrides };
}

/** `cache.acquire` of {@link acquireRequest}. */
export function acquire(store: Store, key: string, token: string, overrides: Partial<CacheAcquireRequest> = {}): Promise<CacheAcquireResult> {
  return store.cache.acquire(acquireRequest(key, token, overrides));
}

/** Acquires `key` and asserts this caller became its builder; returns the entry. */
export async function build(store: Store, key: string, token: string, overrides: Partial<CacheAcquireRequest> = {}): Promise<CacheEntry> {
  const result = await acquire(store, key, token, overrides);
  assert.equal(result.state, 'build', `expected ${token} to become the builder of ${key}`);
  assert.equal(result.entry.builderToken, token);
  return result.entry;
}

/** A completion of `(CACHE, key)` by `token`. */
export function completion(key: string, token: string, value: JsonValue, ttlMs = TTL_MS, staleMs = 0): CacheCompleteRequest {
  return { cache: CACHE, key, token, value, ttlMs, staleMs };
}

/** Builds `key` now and completes it with `value`, fresh for `ttlMs`, servable stale `staleMs` after; returns the ready entry. */
export async function buildReady(store: Store, key: string, value: JsonValue, ttlMs = TTL_MS, staleMs = 0): Promise<CacheEntry> {
  const token = `builder-of-${key}`;
  await build(store, key, token);
  assert.equal(await store.cache.complete(completion(key, token, value, ttlMs, staleMs)), true);
  const entry = await store.cache.get(CACHE, key);
  assert.ok(entry);
  return entry;
}
