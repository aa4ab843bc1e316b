/**
 * Conformance: what the asset pipeline and artifact garbage collection need from the store —
 * publications listed and removed by subject, version counters, the artifact refs something may
 * still read, and runs listed by subject.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { JsonValue } from '../../src/core/model.ts';
import type { Backend, CacheAcquireRequest, FailureDecision, JobSpec, PublicationRequest } from '../../src/core/ports.ts';
import type { BackendHarness } from './backend-suite-fixture.ts';
import { backendTest, claimOne, complete, fail, failure, leaseOf, stageJob, submit } from './backend-suite-fixture.ts';

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
async function publish(backend: Backend, requests: readonly PublicationRequest[]): Promise<void> {
  await submit(backend);
  const claimed = await claimOne(backend);
  const result = await complete(backend, { lease: leaseOf(claimed), output: { ok: true }, durationMs: 1, next: null, publish: requests });
  assert.equal(result.outcome, 'committed');
  assert.equal(result.outcome === 'committed' ? (result.publicationsRefused ?? 0) : -1, 0);
}

/** `listPublications` and `deletePublications`. */
function describePublicationsBySubject(harness: BackendHarness): void {
  describe('publications by subject', () => {
    const test = backendTest(harness);

    test('listPublications is empty for a subject never published', async ({ backend }) => {
      assert.deepEqual(await backend.listPublications(SUBJECT), []);
    });

    test('listPublications returns every publication of that subject only, by profile name', async ({ backend }) => {
      await publish(backend, [
        publication('thumb', art(1)),
        publication('preview', art(2)),
        publication('Large', art(3)),
        publication('preview', art(4), { subjectId: 'asset_other' }),
      ]);
      const listed = await backend.listPublications(SUBJECT);
      assert.deepEqual(
        listed.map((p) => p.profile),
        ['Large', 'preview', 'thumb'],
        'byte order, as every listing',
      );
      for (const stored of listed) assert.deepEqual(stored, await backend.getPublication(SUBJECT, stored.profile));
      assert.deepEqual(
        (await backend.listPublications('asset_other')).map((p) => [p.profile, p.artifactRef]),
        [['preview', art(4)]],
      );
    });

    test('deletePublications removes the listed profiles only and counts what it removed', async ({ backend }) => {
      await publish(backend, [publication('a', art(1)), publication('b', art(2)), publication('c', art(3))]);
      assert.equal(await backend.deletePublications(SUBJECT, ['b', 'missing']), 1);
      assert.equal(await backend.getPublication(SUBJECT, 'b'), null);
      assert.deepEqual((await backend.listPublications(SUBJECT)).map((p) => p.profile), ['a', 'c']);
      assert.equal(await backend.deletePublications(SUBJECT, []), 0, 'an empty list removes none');
      assert.equal((await backend.listPublications(SUBJECT)).length, 2);
    });

    test('deletePublications without profiles removes every profile of the subject and no other subject', async ({ backend }) => {
      await publish(backend, [publication('a', art(1)), publication('b', art(2)), publication('a', art(3), { subjectId: 'asset_other' })]);
      assert.equal(await backend.deletePublications(SUBJECT), 2);
      assert.equal(await backend.getPublication(SUBJECT, 'a'), null);
      assert.deepEqual(await backend.listPublications(SUBJECT), []);
      assert.equal((await backend.getPublication('asset_other', 'a'))?.artifactRef, art(3));
      assert.equal(await backend.deletePublications(SUBJECT), 0, 'nothing left to remove');
    });

    test('deletePublications of an unknown subject removes nothing', async ({ backend }) => {
      await publish(backend, [publication('a', art(1))]);
      assert.equal(await backend.deletePublications('asset_unknown'), 0);
      assert.equal(await backend.deletePublications('asset_unknown', ['a']), 0);
      assert.equal((await backend.listPublications(SUBJECT)).length, 1);
    });

    test('after deletePublications a later commit publishes the pair again, even at a lower version', async ({ backend }) => {
      await publish(backend, [publication('a', art(1), { subjectVersion: 5 })]);
      assert.equal(await backend.deletePublications(SUBJECT), 1);
      await publish(backend, [publication('a', art(2), { subjectVersion: 1 })]);
      const stored = await backend.getPublication(SUBJECT, 'a');
      assert.equal(stored?.artifactRef, art(2));
      assert.equal(stored?.subjectVersion, 1);
    });
  });
}

/** `allocateVersion`. */
function describeVersionCounters(harness: BackendHarness): void {
  describe('version counters', () => {
    const test = backendTest(harness);

    test('allocateVersion hands out 1, 2, 3, ... for one scope and key', async ({ backend }) => {
      const versions = [];
      for (let i = 0; i < 3; i++) versions.push(await backend.allocateVersion('assets', SUBJECT));
      assert.deepEqual(versions, [1, 2, 3]);
    });

    test('each scope and key counts on its own', async ({ backend }) => {
      assert.equal(await backend.allocateVersion('assets', 'a'), 1);
      assert.equal(await backend.allocateVersion('assets', 'a'), 2);
      assert.equal(await backend.allocateVersion('assets', 'b'), 1);
      assert.equal(await backend.allocateVersion('other', 'a'), 1);
      assert.equal(await backend.allocateVersion('assets', 'a'), 3);
      assert.equal(await backend.allocateVersion('other', 'b'), 1);
    });

    test('concurrent calls get every value from 1 to n exactly once', async ({ backend }) => {
      const versions = await Promise.all(Array.from({ length: 8 }, () => backend.allocateVersion('assets', 'race')));
      assert.deepEqual([...versions].sort((a, b) => a - b), [1, 2, 3, 4, 5, 6, 7, 8]);
      assert.equal(await backend.allocateVersion('assets', 'race'), 9);
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
async function runWith(backend: Backend, name: string, input: JsonValue, output?: JsonValue, subject?: { id: string; version: number }) {
  const run = await submit(backend, {
    ...pipelineOf(name),
    input,
    ...(subject ? { subjectId: subject.id, subjectVersion: subject.version } : {}),
  });
  if (output === undefined) return run;
  const claimed = await claimOne(backend, `${name}.a`);
  const result = await complete(backend, { lease: leaseOf(claimed), output, durationMs: 1, next: stageJob('b', { pipeline: name }) });
  assert.equal(result.outcome, 'committed');
  return run;
}

/** Claims the `b` job of pipeline `name`'s only run and fails it with `decision`. */
async function failB(backend: Backend, name: string, decision: FailureDecision): Promise<void> {
  const claimed = await claimOne(backend, `${name}.b`);
  const result = await fail(backend, { lease: leaseOf(claimed), error: failure('permanent'), durationMs: 1, decision });
  assert.equal(result.outcome, 'committed');
}

/** Status of the oldest run of each pipeline (their only run, or v1 of `superseded`). */
async function oldestStatuses(backend: Backend, pipelines: readonly string[]): Promise<(string | undefined)[]> {
  return Promise.all(pipelines.map(async (pipeline) => (await backend.listRuns({ pipeline, limit: 10 })).at(-1)?.status));
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
async function cacheValue(backend: Backend, key: string, value: JsonValue, ttlMs = 60_000, staleMs = 0): Promise<void> {
  const request = cacheRequest(key, `tok-${key}`);
  assert.equal((await backend.acquireCacheEntry(request)).state, 'build');
  assert.equal(await backend.completeCacheEntry({ cache: 'render', key, token: request.token, value, ttlMs, staleMs }), true);
}

/** `listReferencedArtifacts`. */
function describeReferencedArtifacts(harness: BackendHarness): void {
  describe('referenced artifacts', () => {
    const test = backendTest(harness);

    test('an empty store references nothing', async ({ backend }) => {
      assert.deepEqual(await backend.listReferencedArtifacts(), []);
    });

    test('the artifact of every publication is referenced', async ({ backend }) => {
      await publish(backend, [publication('a', art(3)), publication('b', art(1)), publication('a', art(3), { subjectId: 'asset_other' })]);
      assert.deepEqual(await backend.listReferencedArtifacts(), [art(1), art(3)]);
    });

    test('refs anywhere in the value of a cache entry of every status are referenced; lookalikes are not', async ({ backend, clock }) => {
      await cacheValue(backend, 'fresh', nested(art(1), art(2), art(3)));
      await cacheValue(backend, 'expired', { artifact: art(4) }, 1_000);
      await cacheValue(backend, 'revalidating', { artifact: art(5) }, 1_000, 60_000);
      await cacheValue(backend, 'lookalikes', LOOKALIKES);
      await clock.advance(2_000);
      const revalidate = await backend.acquireCacheEntry(cacheRequest('revalidating', 't2'));
      assert.equal(revalidate.state, 'stale', 'a ready entry being rebuilt keeps its value');
      assert.equal((await backend.acquireCacheEntry(cacheRequest('building', 't3'))).state, 'build');
      await backend.acquireCacheEntry(cacheRequest('negative', 't4'));
      const negative = { error: { code: 'ASSET_UNREADABLE', message: 'truncated', class: 'permanent' }, ttlMs: 60_000 };
      assert.equal(await backend.failCacheEntry({ cache: 'render', key: 'negative', token: 't4', negative }), true);
      assert.equal((await backend.getCacheEntry('render', 'expired'))?.status, 'ready', 'expired but not purged yet');

      assert.deepEqual(await backend.listReferencedArtifacts(), [art(1), art(2), art(3), art(4), art(5)]);
    });

    test('inputs and stage outputs of queued, running, parked and dead-lettered runs are referenced; of ended runs not', async ({ backend }) => {
      await runWith(backend, 'running', { source: art(10) }, nested(art(11), art(12), art(13)));
      await runWith(backend, 'parked', { source: art(20) }, { artifact: art(21) });
      await failB(backend, 'parked', { action: 'park' });
      await runWith(backend, 'dead', [art(30)], { artifact: art(31) });
      await failB(backend, 'dead', { action: 'dead_letter', rollback: null });
      await runWith(backend, 'queued', { deep: { list: [{ ref: art(40) }] }, similar: LOOKALIKES });
      await endedRuns(backend);

      const live = await oldestStatuses(backend, ['running', 'parked', 'dead', 'queued']);
      assert.deepEqual(live, ['running', 'parked', 'dead_lettered', 'queued']);
      const expected = [10, 11, 12, 13, 20, 21, 30, 31, 40].map(art);
      assert.deepEqual(await backend.listReferencedArtifacts(), expected);
    });

    test('refs are listed sorted and once, wherever they appear', async ({ backend }) => {
      await runWith(backend, 'twice', { source: art(7), again: art(7) }, { same: art(7), other: art(2) });
      await cacheValue(backend, 'k', [art(9), art(7), art(2)]);
      await publish(backend, [publication('a', art(9)), publication('b', art(1))]);
      assert.deepEqual(await backend.listReferencedArtifacts(), [art(1), art(2), art(7), art(9)]);
    });
  });
}

/**
 * Runs that ended for good, each with refs (100+) in its input and stage output that nothing
 * else references: succeeded, failed (compensated), cancelled, superseded.
 */
async function endedRuns(backend: Backend): Promise<void> {
  await submit(backend, { ...pipelineOf('succeeded'), input: { source: art(100) } });
  const done = await claimOne(backend, 'succeeded.a');
  await complete(backend, { lease: leaseOf(done), output: { artifact: art(101) }, durationMs: 1, next: null });

  await runWith(backend, 'failed', { source: art(110) }, { artifact: art(111) });
  const rollback: JobSpec = { ...stageJob('a', { pipeline: 'failed' }), kind: 'rollback' };
  await failB(backend, 'failed', { action: 'dead_letter', rollback });
  const compensation = await claimOne(backend, 'failed.a');
  await complete(backend, { lease: leaseOf(compensation), output: { undone: art(112) }, durationMs: 1, next: null });

  const cancelled = await runWith(backend, 'cancelled', { source: art(120) }, { artifact: art(121) });
  await backend.cancelRun(cancelled.id, 'test');

  await runWith(backend, 'superseded', { source: art(130) }, { artifact: art(131) }, { id: 'asset_s', version: 1 });
  await runWith(backend, 'superseded', { noRefs: true }, undefined, { id: 'asset_s', version: 2 });

  const ended = ['succeeded', 'failed', 'cancelled', 'superseded'];
  assert.deepEqual(await oldestStatuses(backend, ended), ended);
}

/** `listRuns` filtered by subject. */
function describeRunsBySubject(harness: BackendHarness): void {
  describe('runs by subject', () => {
    const test = backendTest(harness);

    test('listRuns by subjectId lists the subject\'s runs of every pipeline newest first, with the other filters', async ({ backend, clock }) => {
      const subject = (id: string, version: number) => ({ subjectId: id, subjectVersion: version });
      const d1 = await submit(backend, subject(SUBJECT, 1));
      await clock.advance(1);
      const o1 = await submit(backend, { ...pipelineOf('other'), ...subject(SUBJECT, 1) });
      await clock.advance(1);
      const t1 = await submit(backend, subject('asset_t', 1));
      await clock.advance(1);
      await submit(backend);
      await clock.advance(1);
      const d2 = await submit(backend, subject(SUBJECT, 2));

      const ids = async (query: Omit<Parameters<Backend['listRuns']>[0], 'limit'> & { limit?: number }): Promise<string[]> =>
        (await backend.listRuns({ limit: 10, ...query })).map((r) => r.id);
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
export function describeAssetSupport(harness: BackendHarness): void {
  describePublicationsBySubject(harness);
  describeVersionCounters(harness);
  describeReferencedArtifacts(harness);
  describeRunsBySubject(harness);
}
