/**
 * Conformance: publications set by compare-and-set inside commits, and remembered client
 * requests (`rememberRequest`).
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { ClaimedJob, CommitResult } from '../../src/core/ports/jobs.ts';
import type { Publication, PublicationRequest } from '../../src/core/ports/publications.ts';
import type { Store } from '../../src/core/ports/store.ts';
import type { StoreHarness } from './store-suite-fixture.ts';
import { storeTest, claimOne, complete, leaseOf, stageJob, submit } from './store-suite-fixture.ts';

const SUBJECT = 'asset_42';
const PROFILE = 'preview';

/** A fake artifact ref made of one repeated hex digit. */
function ref(digit: string): string {
  return `sha256:${digit.repeat(64)}`;
}

/** A publication of `(SUBJECT, PROFILE)` unless overridden. */
function publication(subjectVersion: number, artifactRef: string, overrides: Partial<PublicationRequest> = {}): PublicationRequest {
  return { subjectId: SUBJECT, profile: PROFILE, artifactRef, subjectVersion, ...overrides };
}

/** Submits a run and claims its first job (a fresh lease with a fence above every earlier one). */
async function claimNew(store: Store): Promise<ClaimedJob> {
  await submit(store);
  return claimOne(store);
}

/** Completes the claimed job's stage, publishing `publish` in the same commit. */
function commitPublishing(store: Store, claimed: ClaimedJob, publish: readonly PublicationRequest[]): Promise<CommitResult> {
  return complete(store, { lease: leaseOf(claimed), output: { ok: true }, durationMs: 1, next: stageJob('b'), publish });
}

/** How many publications the committed item had refused (absent counts as 0). */
function refusedOf(result: CommitResult): number {
  assert.equal(result.outcome, 'committed');
  return result.outcome === 'committed' ? (result.publicationsRefused ?? 0) : -1;
}

/** Publications. */
function describePublications(harness: StoreHarness): void {
  describe('publications', () => {
    const test = storeTest(harness);

    test('getPublication is null for a subject or profile never published', async ({ store }) => {
      assert.equal(await store.publications.get(SUBJECT, PROFILE), null);
      const claimed = await claimNew(store);
      assert.equal(refusedOf(await commitPublishing(store, claimed, [publication(1, ref('a'))])), 0);
      assert.equal(await store.publications.get(SUBJECT, 'thumbnail'), null);
      assert.equal(await store.publications.get('asset_other', PROFILE), null);
    });

    test('the first publication of a pair is set by the commit, with the committing lease\'s fence', async ({ store, clock }) => {
      const claimed = await claimNew(store);
      await clock.advance(100);
      const now = await store.now();
      const result = await commitPublishing(store, claimed, [publication(1, ref('a'))]);
      assert.equal(result.outcome, 'committed');
      assert.equal(refusedOf(result), 0);
      const expected: Publication = {
        subjectId: SUBJECT,
        profile: PROFILE,
        artifactRef: ref('a'),
        subjectVersion: 1,
        fence: claimed.job.fence ?? -1,
        updatedAt: now,
      };
      assert.deepEqual(await store.publications.get(SUBJECT, PROFILE), expected);
    });

    test('a lower subject version is refused, counted, and leaves the publication unchanged', async ({ store }) => {
      const first = await claimNew(store);
      const second = await claimNew(store);
      assert.equal(refusedOf(await commitPublishing(store, first, [publication(2, ref('a'))])), 0);
      const before = await store.publications.get(SUBJECT, PROFILE);
      const result = await commitPublishing(store, second, [publication(1, ref('b'))]);
      assert.equal(refusedOf(result), 1, 'the stage still commits; the publication is counted refused');
      assert.deepEqual(await store.publications.get(SUBJECT, PROFILE), before);
      assert.equal((await store.reads.getRun(second.run.id))?.stages[0]?.status, 'succeeded');
    });

    test('a higher subject version replaces the publication even from a lease with a lower fence', async ({ store }) => {
      const older = await claimNew(store);
      const newer = await claimNew(store);
      assert.ok((newer.job.fence ?? 0) > (older.job.fence ?? Infinity));
      assert.equal(refusedOf(await commitPublishing(store, newer, [publication(1, ref('a'))])), 0);
      assert.equal(refusedOf(await commitPublishing(store, older, [publication(2, ref('b'))])), 0);
      const stored = await store.publications.get(SUBJECT, PROFILE);
      assert.equal(stored?.subjectVersion, 2);
      assert.equal(stored?.artifactRef, ref('b'));
      assert.equal(stored?.fence, older.job.fence);
    });

    test('the same version from a later claim (higher fence) replaces it; from an earlier claim it is refused', async ({ store }) => {
      const early = await claimNew(store);
      const late = await claimNew(store);
      const later = await claimNew(store);
      assert.equal(refusedOf(await commitPublishing(store, late, [publication(3, ref('a'))])), 0);
      assert.equal(refusedOf(await commitPublishing(store, early, [publication(3, ref('b'))])), 1, 'a lower fence loses');
      assert.equal((await store.publications.get(SUBJECT, PROFILE))?.artifactRef, ref('a'));
      assert.equal(refusedOf(await commitPublishing(store, later, [publication(3, ref('c'))])), 0);
      const stored = await store.publications.get(SUBJECT, PROFILE);
      assert.equal(stored?.artifactRef, ref('c'));
      assert.equal(stored?.fence, later.job.fence);
    });

    test('a commit item refused for its lease publishes nothing, and does not stop the items after it', async ({ store, clock }) => {
      const stale = await claimNew(store);
      await clock.advance(60_000);
      const current = await claimOne(store);
      assert.equal(current.job.id, stale.job.id, 'the expired lease was taken over');
      const other = await claimNew(store);
      const results = await store.jobs.commit([
        { type: 'complete', lease: leaseOf(stale), output: {}, durationMs: 1, next: null, publish: [publication(9, ref('a'))] },
        {
          type: 'complete',
          lease: leaseOf(other),
          output: {},
          durationMs: 1,
          next: null,
          publish: [publication(1, ref('b'), { subjectId: 'asset_other' })],
        },
      ]);
      assert.deepEqual(results[0], { outcome: 'lease_lost' });
      assert.equal(refusedOf(results[1] ?? { outcome: 'lease_lost' }), 0);
      assert.equal(await store.publications.get(SUBJECT, PROFILE), null);
      assert.equal((await store.publications.get('asset_other', PROFILE))?.artifactRef, ref('b'));
    });

    test('one item sets several publications at once and counts only those refused', async ({ store }) => {
      const first = await claimNew(store);
      assert.equal(refusedOf(await commitPublishing(store, first, [publication(5, ref('a'), { profile: 'thumbnail' })])), 0);
      const second = await claimNew(store);
      const result = await commitPublishing(store, second, [
        publication(4, ref('b'), { profile: 'preview' }),
        publication(4, ref('c'), { profile: 'thumbnail' }),
        publication(4, ref('d'), { profile: 'poster' }),
      ]);
      assert.equal(refusedOf(result), 1);
      const stored = await Promise.all(['preview', 'thumbnail', 'poster'].map((p) => store.publications.get(SUBJECT, p)));
      assert.deepEqual(
        stored.map((p) => [p?.artifactRef, p?.subjectVersion, p?.fence]),
        [
          [ref('b'), 4, second.job.fence],
          [ref('a'), 5, first.job.fence],
          [ref('d'), 4, second.job.fence],
        ],
      );
    });
  });
}

/** `rememberRequest`. */
function describeRequestRecords(harness: StoreHarness): void {
  describe('remembered requests', () => {
    const test = storeTest(harness);

    test('the first request of a scope and key is stored; later ones get the first record back', async ({ store, clock }) => {
      const now = await store.now();
      const first = await store.requests.remember({ scope: 'POST /qr', key: 'idem-1', requestHash: 'h1', value: { runId: 'run_1' } });
      const stored = { scope: 'POST /qr', key: 'idem-1', requestHash: 'h1', value: { runId: 'run_1' }, createdAt: now };
      assert.deepEqual(first, { created: true, record: stored });

      await clock.advance(1_000);
      const again = await store.requests.remember({ scope: 'POST /qr', key: 'idem-1', requestHash: 'h2', value: { runId: 'run_2' } });
      assert.deepEqual(again, { created: false, record: stored }, 'the first record wins, whatever the later one says');
      const same = await store.requests.remember({ scope: 'POST /qr', key: 'idem-1', requestHash: 'h1', value: { runId: 'run_1' } });
      assert.deepEqual(same, { created: false, record: stored });
    });

    test('scopes and keys are independent', async ({ store, clock }) => {
      await store.requests.remember({ scope: 'POST /qr', key: 'idem-1', requestHash: 'h1', value: 1 });
      await clock.advance(10);
      const now = await store.now();
      const otherScope = await store.requests.remember({ scope: 'POST /assets', key: 'idem-1', requestHash: 'h2', value: 2 });
      assert.deepEqual(otherScope, {
        created: true,
        record: { scope: 'POST /assets', key: 'idem-1', requestHash: 'h2', value: 2, createdAt: now },
      });
      const otherKey = await store.requests.remember({ scope: 'POST /qr', key: 'idem-2', requestHash: 'h3', value: 3 });
      assert.equal(otherKey.created, true);
      assert.equal(otherKey.record.requestHash, 'h3');
      const original = await store.requests.remember({ scope: 'POST /qr', key: 'idem-1', requestHash: 'hx', value: 0 });
      assert.equal(original.created, false);
      assert.equal(original.record.requestHash, 'h1');
      assert.equal(original.record.value, 1);
    });

    test('concurrent first requests of one scope and key create exactly one record', async ({ store }) => {
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          store.requests.remember({ scope: 'POST /qr', key: 'race', requestHash: `h${i}`, value: i }),
        ),
      );
      assert.equal(results.filter((r) => r.created).length, 1);
      const winner = results.find((r) => r.created)?.record;
      for (const r of results) assert.deepEqual(r.record, winner);
    });

    test('getRequest reads a remembered request and changes nothing; unknown ones are null', async ({ store }) => {
      assert.equal(await store.requests.get('POST /qr', 'idem-1'), null);
      const { record } = await store.requests.remember({ scope: 'POST /qr', key: 'idem-1', requestHash: 'h1', value: { canonical: { a: 1 } } });
      assert.deepEqual(await store.requests.get('POST /qr', 'idem-1'), record);
      assert.equal(await store.requests.get('POST /assets', 'idem-1'), null);
      const after = await store.requests.remember({ scope: 'POST /qr', key: 'idem-2', requestHash: 'h2', value: null });
      assert.equal(after.created, true, 'reading a key never creates it');
    });
  });
}

/** Publications and remembered requests. */
export function describePublicationsAndRequests(harness: StoreHarness): void {
  describePublications(harness);
  describeRequestRecords(harness);
}
