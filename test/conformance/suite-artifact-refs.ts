/**
 * Conformance, artifactRefs sub-port: the artifact refs something may still read, which garbage
 * collection must keep: publications, cache entries of every status, and the inputs and stage
 * outputs of runs that may still run or be replayed.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { JsonValue } from '../../src/core/model.ts';
import type { FailureDecision, JobSpec } from '../../src/core/ports/jobs.ts';
import type { PublicationRequest } from '../../src/core/ports/publications.ts';
import type { Store } from '../../src/core/ports/store.ts';
import type { StoreHarness } from './fixture.ts';
import { CACHE, acquire, art, build, buildReady, claimOne, complete, failJob, failure, leaseOf, onPipeline, publish, stageJob, storeTest, submit } from './fixture.ts';

/** A publication of `asset_42` at version 1 unless overridden. */
function publication(profile: string, artifactRef: string, overrides: Partial<PublicationRequest> = {}): PublicationRequest {
  return { subjectId: 'asset_42', profile, artifactRef, subjectVersion: 1, ...overrides };
}

/**
 * Submits a run of pipeline `name` with `input`, and completes stage `a` with `output` (the run is
 * then `running`, its `b` job ready), unless `output` is undefined (the run stays `queued`).
 */
async function runWith(store: Store, name: string, input: JsonValue, output?: JsonValue, subject?: { id: string; version: number }) {
  const run = await submit(store, {
    ...onPipeline(name),
    input,
    ...(subject ? { subjectId: subject.id, subjectVersion: subject.version } : {}),
  });
  if (output === undefined) return run;
  const claimed = await claimOne(store, `${name}.a`);
  const result = await complete(store, { lease: leaseOf(claimed), output, durationMs: 1, next: stageJob('b', { pipeline: name }) });
  assert.equal(result.outcome, 'committed');
  return run;
}

/** Claims the `b` job of pipeline `name`'s only run and fails it permanently with `decision`. */
async function failB(store: Store, name: string, decision: FailureDecision): Promise<void> {
  await failJob(store, await claimOne(store, `${name}.b`), decision, failure('permanent'));
}

/** Status of the oldest run of each pipeline (their only run, or v1 of `superseded`). */
async function oldestStatuses(store: Store, pipelines: readonly string[]): Promise<(string | undefined)[]> {
  return Promise.all(pipelines.map(async (pipeline) => (await store.reads.listRuns({ pipeline, limit: 10 })).at(-1)?.status));
}

/** Refs nested in a JSON value at depth, inside a longer string, and as an object key. */
function nested(inArray: string, inText: string, asKey: string): JsonValue {
  return { a: [{ b: { c: ['x', inArray] } }], note: `built from ${inText} at 3x`, byRef: { [asKey]: true } };
}

/** Strings that only look like refs: none of them is one. */
const LOOKALIKES: JsonValue = [
  `sha256:${'AB'.repeat(32)}`,
  `SHA256:${'a'.repeat(64)}`,
  `sha256:${'a'.repeat(63)}`,
  `sha256:${'a'.repeat(65)}`,
  'sha256:',
  `sha256 ${'b'.repeat(64)}`,
];

/**
 * Runs that ended for good, each with refs (100+) in its input and stage output that nothing
 * else references: succeeded, failed (compensated), cancelled, superseded.
 */
async function endedRuns(store: Store): Promise<void> {
  await submit(store, { ...onPipeline('succeeded'), input: { source: art(100) } });
  const done = await claimOne(store, 'succeeded.a');
  await complete(store, { lease: leaseOf(done), output: { artifact: art(101) }, durationMs: 1, next: null });

  await runWith(store, 'failed', { source: art(110) }, { artifact: art(111) });
  const rollback: JobSpec = { ...stageJob('a', { pipeline: 'failed' }), kind: 'rollback' };
  await failB(store, 'failed', { action: 'dead_letter', rollback });
  const compensation = await claimOne(store, 'failed.a');
  await complete(store, { lease: leaseOf(compensation), output: { undone: art(112) }, durationMs: 1, next: null });

  const cancelled = await runWith(store, 'cancelled', { source: art(120) }, { artifact: art(121) });
  await store.operator.cancelRun(cancelled.id, 'test');

  await runWith(store, 'superseded', { source: art(130) }, { artifact: art(131) }, { id: 'asset_s', version: 1 });
  await runWith(store, 'superseded', { noRefs: true }, undefined, { id: 'asset_s', version: 2 });

  const ended = ['succeeded', 'failed', 'cancelled', 'superseded'];
  assert.deepEqual(await oldestStatuses(store, ended), ended);
}

/** Declares the artifactRefs sub-port's tests: `list`. */
export function describeArtifactRefsPort(harness: StoreHarness): void {
  describe('artifactRefs sub-port', () => {
    const test = storeTest(harness);

    test('an empty store references nothing', async ({ store }) => {
      assert.deepEqual(await store.artifactRefs.list(), []);
    });

    test('the artifact of every publication is referenced', async ({ store }) => {
      await publish(store, [publication('a', art(3)), publication('b', art(1)), publication('a', art(3), { subjectId: 'asset_other' })]);
      assert.deepEqual(await store.artifactRefs.list(), [art(1), art(3)]);
    });

    test('refs anywhere in the value of a cache entry of every status are referenced; lookalikes are not', async ({ store, clock }) => {
      await buildReady(store, 'fresh', nested(art(1), art(2), art(3)));
      await buildReady(store, 'expired', { artifact: art(4) }, 1_000);
      await buildReady(store, 'revalidating', { artifact: art(5) }, 1_000, 60_000);
      await buildReady(store, 'lookalikes', LOOKALIKES);
      await clock.advance(2_000);
      const revalidate = await acquire(store, 'revalidating', 't2');
      assert.equal(revalidate.state, 'stale', 'a ready entry being rebuilt keeps its value');
      await build(store, 'building', 't3');
      await build(store, 'negative', 't4');
      const negative = { error: { code: 'ASSET_UNREADABLE', message: 'truncated', class: 'permanent' }, ttlMs: 60_000 };
      assert.equal(await store.cache.fail({ cache: CACHE, key: 'negative', token: 't4', negative }), true);
      assert.equal((await store.cache.get(CACHE, 'expired'))?.status, 'ready', 'expired but not purged yet');

      assert.deepEqual(await store.artifactRefs.list(), [art(1), art(2), art(3), art(4), art(5)]);
    });

    test('inputs and stage outputs of queued, running, parked and dead-lettered runs are referenced; of ended runs not', async ({ store }) => {
      await runWith(store, 'running', { source: art(10) }, nested(art(11), art(12), art(13)));
      await runWith(store, 'parked', { source: art(20) }, { artifact: art(21) });
      await failB(store, 'parked', { action: 'park' });
      await runWith(store, 'dead', [art(30)], { artifact: art(31) });
      await failB(store, 'dead', { action: 'dead_letter', rollback: null });
      await runWith(store, 'queued', { deep: { list: [{ ref: art(40) }] }, similar: LOOKALIKES });
      await endedRuns(store);

      const live = await oldestStatuses(store, ['running', 'parked', 'dead', 'queued']);
      assert.deepEqual(live, ['running', 'parked', 'dead_lettered', 'queued']);
      const expected = [10, 11, 12, 13, 20, 21, 30, 31, 40].map(art);
      assert.deepEqual(await store.artifactRefs.list(), expected);
    });

    test('refs are listed sorted and once, wherever they appear', async ({ store }) => {
      await runWith(store, 'twice', { source: art(7), again: art(7) }, { same: art(7), other: art(2) });
      await buildReady(store, 'k', [art(9), art(7), art(2)]);
      await publish(store, [publication('a', art(9)), publication('b', art(1))]);
      assert.deepEqual(await store.artifactRefs.list(), [art(1), art(2), art(7), art(9)]);
    });
  });
}
