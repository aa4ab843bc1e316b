/**
 * Conformance: what the asset pipeline and artifact garbage collection need from the store —
 * publications listed and removed by subject, version counters, the artifact refs something may
 * still read, and runs listed by subject.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { JsonValue } from '../../src/core/model.ts';
import type { CacheAcquireRequest } from '../../src/core/ports/cache.ts';
import type { FailureDecision, JobSpec } from '../../src/core/ports/jobs.ts';
import type { PublicationRequest } from '../../src/core/ports/publications.ts';
import type { Store } from '../../src/core/ports/store.ts';
import type { StoreHarness } from './store-suite-fixture.ts';
import { storeTest, claimOne, complete, fail, failure, leaseOf, stageJob, submit } from './store-suite-fixture.ts';

const SUBJECT = 'asset_42';

/** A distinct, well-formed artifact ref: `sha256:` and `n` as 64 lowercase hex digits (sorts as `n`). */
function art(n: number): string {
  return `sha256:${n.toString(16).padStart(64, '0')}`;
}

/** A publication of `SUBJECT` unless overridden. */
function publication(profile: string, artifactRef: string, overrides: Partial<PublicationRequest> = {}): PublicationRequest {
  return { subjectId: SUBJECT, profile, artifactRef, subjectVersion: 1, ...overrides };
}

/** Submits a run of `demo`, claims its first job and commits `publish` with its completion. */
async function publish(store: Store, requests: readonly PublicationRequest[]): Promise<void> {
  await submit(store);
  const claimed = await claimOne(store);
  const result = await complete(store, { lease: leaseOf(claimed), output: { ok: true }, durationMs: 1, next: null, publish: requests });
  assert.equal(result.outcome, 'committed');
  assert.equal(result.outcome === 'committed' ? (result.publicationsRefused ?? 0) : -1, 0);
}

/** `listPublications` and `deletePublications`. */
function describePublicationsBySubject(harness: StoreHarness): void {
  describe('publications by subject', () => {
    const test = storeTest(harness);

    test('listPublications is empty for a subject never published', async ({ store }) => {
      assert.deepEqual(await store.publications.list(SUBJECT), []);
    });

    test('listPublications returns every publication of that subject only, by profile name', async ({ store }) => {
      await publish(store, [
        publication('thumb', art(1)),
        publication('preview', art(2)),
        publication('Large', art(3)),
        publication('preview', art(4), { subjectId: 'asset_other' }),
      ]);
      const listed = await store.publications.list(SUBJECT);
      assert.deepEqual(
        listed.map((p) => p.profile),
        ['Large', 'preview', 'thumb'],
        'byte order, as every listing',
      );
      for (const stored of listed) assert.deepEqual(stored, await store.publications.get(SUBJECT, stored.profile));
      assert.deepEqual(
        (await store.publications.list('asset_other')).map((p) => [p.profile, p.artifactRef]),
        [['preview', art(4)]],
      );
    });

    test('deletePublications removes the listed profiles only and counts what it removed', async ({ store }) => {
      await publish(store, [publication('a', art(1)), publication('b', art(2)), publication('c', art(3))]);
      assert.equal(await store.publications.delete(SUBJECT, ['b', 'missing']), 1);
      assert.equal(await store.publications.get(SUBJECT, 'b'), null);
      assert.deepEqual((await store.publications.list(SUBJECT)).map((p) => p.profile), ['a', 'c']);
      assert.equal(await store.publications.delete(SUBJECT, []), 0, 'an empty list removes none');
      assert.equal((await store.publications.list(SUBJECT)).length, 2);
    });

    test('deletePublications without profiles removes every profile of the subject and no other subject', async ({ store }) => {
      await publish(store, [publication('a', art(1)), publication('b', art(2)), publication('a', art(3), { subjectId: 'asset_other' })]);
      assert.equal(await store.publications.delete(SUBJECT), 2);
      assert.equal(await store.publications.get(SUBJECT, 'a'), null);
      assert.deepEqual(await store.publications.list(SUBJECT), []);
      assert.equal((await store.publications.get('asset_other', 'a'))?.artifactRef, art(3));
      assert.equal(await store.publications.delete(SUBJECT), 0, 'nothing left to remove');
    });

    test('deletePublications of an unknown subject removes nothing', async ({ store }) => {
      await publish(store, [publication('a', art(1))]);
      assert.equal(await store.publications.delete('asset_unknown'), 0);
      assert.equal(await store.publications.delete('asset_unknown', ['a']), 0);
      assert.equal((await store.publications.list(SUBJECT)).length, 1);
    });

    test('after deletePublications a later commit publishes the pair again, even at a lower version', async ({ store }) => {
      await publish(store, [publication('a', art(1), { subjectVersion: 5 })]);
      assert.equal(await store.publications.delete(SUBJECT), 1);
      await publish(store, [publication('a', art(2), { subjectVersion: 1 })]);
      const stored = await store.publications.get(SUBJECT, 'a');
      assert.equal(stored?.artifactRef, art(2));
      assert.equal(stored?.subjectVersion, 1);
    });
  });
}

/** `allocateVersion`. */
function describeVersionCounters(harness: StoreHarness): void {
  describe('version counters', () => {
    const test = storeTest(harness);

    test('allocateVersion hands out 1, 2, 3, ... for one scope and key', async ({ store }) => {
      const versions = [];
      for (let i = 0; i < 3; i++) versions.push(await store.versions.allocate('assets', SUBJECT));
      assert.deepEqual(versions, [1, 2, 3]);
    });

    test('each scope and key counts on its own', async ({ store }) => {
      assert.equal(await store.versions.allocate('assets', 'a'), 1);
      assert.equal(await store.versions.allocate('assets', 'a'), 2);
      assert.equal(await store.versions.allocate('assets', 'b'), 1);
      assert.equal(await store.versions.allocate('other', 'a'), 1);
      assert.equal(await store.versions.allocate('assets', 'a'), 3);
      assert.equal(await store.versions.allocate('other', 'b'), 1);
    });

    test('concurrent calls get every value from 1 to n exactly once', async ({ store }) => {
      const versions = await Promise.all(Array.from({ length: 8 }, () => store.versions.allocate('assets', 'race')));
      assert.deepEqual([...versions].sort((a, b) => a - b), [1, 2, 3, 4, 5, 6, 7, 8]);
      assert.equal(await store.versions.allocate('assets', 'race'), 9);
    });
  });
}

/** A pipeline of its own per run, so that each run's jobs are claimed from queues nobody else uses. */
function pipelineOf(name: string): { pipeline: string; firstJob: JobSpec } {
  return { pipeline: name, firstJob: stageJob('a', { pipeline: name }) };
}

/**
 * Submits a run of pipeline `name` with `input`, and completes stage `a` with `output` (the run is
 * then `running`, its `b` job ready), unless `output` is undefined (the run stays `queued`).
 */
async function runWith(store: Store, name: string, input: JsonValue, output?: JsonValue, subject?: { id: string; version: number }) {
  const run = await submit(store, {
    ...pipelineOf(name),
    input,
    ...(subject ? { subjectId: subject.id, subjectVersion: subject.version } : {}),
  });
  if (output === undefined) return run;
  const claimed = await claimOne(store, `${name}.a`);
  const result = await complete(store, { lease: leaseOf(claimed), output, durationMs: 1, next: stageJob('b', { pipeline: name }) });
  assert.equal(result.outcome, 'committed');
  return run;
}

/** Claims the `b` job of pipeline `name`'s only run and fails it with `decision`. */
async function failB(store: Store, name: string, decision: FailureDecision): Promise<void> {
  const claimed = await claimOne(store, `${name}.b`);
  const result = await fail(store, { lease: leaseOf(claimed), error: failure('permanent'), durationMs: 1, decision });
  assert.equal(result.outcome, 'committed');
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

/** An acquire of `(render, key)` by `token`. */
function cacheRequest(key: string, token: string): CacheAcquireRequest {
  return { cache: 'render', key, owner: 'w', token, leaseMs: 10_000 };
}

/** Builds `(render, key)` and completes it with `value`, fresh for `ttlMs`, servable stale `staleMs` after. */
async function cacheValue(store: Store, key: string, value: JsonValue, ttlMs = 60_000, staleMs = 0): Promise<void> {
  const request = cacheRequest(key, `tok-${key}`);
  assert.equal((await store.cache.acquire(request)).state, 'build');
  assert.equal(await store.cache.complete({ cache: 'render', key, token: request.token, value, ttlMs, staleMs }), true);
}

/** `listReferencedArtifacts`. */
function describeReferencedArtifacts(harness: StoreHarness): void {
  describe('referenced artifacts', () => {
    const test = storeTest(harness);

    test('an empty store references nothing', async ({ store }) => {
      assert.deepEqual(await store.artifactRefs.list(), []);
    });

    test('the artifact of every publication is referenced', async ({ store }) => {
      await publish(store, [publication('a', art(3)), publication('b', art(1)), publication('a', art(3), { subjectId: 'asset_other' })]);
      assert.deepEqual(await store.artifactRefs.list(), [art(1), art(3)]);
    });

    test('refs anywhere in the value of a cache entry of every status are referenced; lookalikes are not', async ({ store, clock }) => {
      await cacheValue(store, 'fresh', nested(art(1), art(2), art(3)));
      await cacheValue(store, 'expired', { artifact: art(4) }, 1_000);
      await cacheValue(store, 'revalidating', { artifact: art(5) }, 1_000, 60_000);
      await cacheValue(store, 'lookalikes', LOOKALIKES);
      await clock.advance(2_000);
      const revalidate = await store.cache.acquire(cacheRequest('revalidating', 't2'));
      assert.equal(revalidate.state, 'stale', 'a ready entry being rebuilt keeps its value');
      assert.equal((await store.cache.acquire(cacheRequest('building', 't3'))).state, 'build');
      await store.cache.acquire(cacheRequest('negative', 't4'));
      const negative = { error: { code: 'ASSET_UNREADABLE', message: 'truncated', class: 'permanent' }, ttlMs: 60_000 };
      assert.equal(await store.cache.fail({ cache: 'render', key: 'negative', token: 't4', negative }), true);
      assert.equal((await store.cache.get('render', 'expired'))?.status, 'ready', 'expired but not purged yet');

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
      await cacheValue(store, 'k', [art(9), art(7), art(2)]);
      await publish(store, [publication('a', art(9)), publication('b', art(1))]);
      assert.deepEqual(await store.artifactRefs.list(), [art(1), art(2), art(7), art(9)]);
    });
  });
}

/**
 * Runs that ended for good, each with refs (100+) in its input and stage output that nothing
 * else references: succeeded, failed (compensated), cancelled, superseded.
 */
async function endedRuns(store: Store): Promise<void> {
  await submit(store, { ...pipelineOf('succeeded'), input: { source: art(100) } });
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

/** `listRuns` filtered by subject. */
function describeRunsBySubject(harness: StoreHarness): void {
  describe('runs by subject', () => {
    const test = storeTest(harness);

    test('listRuns by subjectId lists the subject\'s runs of every pipeline newest first, with the other filters', async ({ store, clock }) => {
      const subject = (id: string, version: number) => ({ subjectId: id, subjectVersion: version });
      const d1 = await submit(store, subject(SUBJECT, 1));
      await clock.advance(1);
      const o1 = await submit(store, { ...pipelineOf('other'), ...subject(SUBJECT, 1) });
      await clock.advance(1);
      const t1 = await submit(store, subject('asset_t', 1));
      await clock.advance(1);
      await submit(store);
      await clock.advance(1);
      const d2 = await submit(store, subject(SUBJECT, 2));

      const ids = async (query: Omit<Parameters<Store['reads']['listRuns']>[0], 'limit'> & { limit?: number }): Promise<string[]> =>
        (await store.reads.listRuns({ limit: 10, ...query })).map((r) => r.id);
      assert.deepEqual(await ids({ subjectId: SUBJECT }), [d2.id, o1.id, d1.id]);
      assert.deepEqual(await ids({ subjectId: SUBJECT, pipeline: 'demo' }), [d2.id, d1.id]);
      assert.deepEqual(await ids({ subjectId: SUBJECT, status: 'superseded' }), [d1.id], 'v2 superseded v1 of demo');
      assert.deepEqual(await ids({ subjectId: SUBJECT, status: 'queued' }), [d2.id, o1.id]);
      assert.deepEqual(await ids({ subjectId: SUBJECT, pipeline: 'other', status: 'queued' }), [o1.id]);
      assert.deepEqual(await ids({ subjectId: SUBJECT, pipeline: 'other', status: 'superseded' }), []);
      assert.deepEqual(await ids({ subjectId: SUBJECT, before: d2.id, limit: 1 }), [o1.id]);
      assert.deepEqual(await ids({ subjectId: SUBJECT, limit: 2 }), [d2.id, o1.id]);
      assert.deepEqual(await ids({ subjectId: 'asset_t' }), [t1.id]);
      assert.deepEqual(await ids({ subjectId: 'asset_unknown' }), []);
    });
  });
}

/** Publications by subject, version counters, referenced artifacts and runs by subject. */
export function describeAssetSupport(harness: StoreHarness): void {
  describePublicationsBySubject(harness);
  describeVersionCounters(harness);
  describeReferencedArtifacts(harness);
  describeRunsBySubject(harness);
}
