/**
 * Conformance, jobs sub-port: publications set by a completion (`CompleteStageRequest.publish`),
 * each by compare-and-set in the commit's transaction: a higher subject version wins, then a
 * higher fence; a refused publication does not refuse the item, it is counted.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { ClaimedJob, CommitResult } from '../../../src/core/ports/jobs.ts';
import type { Publication, PublicationRequest } from '../../../src/core/ports/publications.ts';
import type { Store } from '../../../src/core/ports/store.ts';
import type { StoreHarness } from '../fixture.ts';
import { art, claimNew, claimOne, complete, leaseOf, stageJob, storeTest } from '../fixture.ts';

const SUBJECT = 'asset_42';
const PROFILE = 'preview';

/** A publication of `(SUBJECT, PROFILE)` unless overridden. */
function publication(subjectVersion: number, artifactRef: string, overrides: Partial<PublicationRequest> = {}): PublicationRequest {
  return { subjectId: SUBJECT, profile: PROFILE, artifactRef, subjectVersion, ...overrides };
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

/** `jobs.commit` items that publish. */
export function describeCommitPublications(harness: StoreHarness): void {
  describe('commit: publications', () => {
    const test = storeTest(harness);

    test('the first publication of a pair is set by the commit, with the committing lease\'s fence', async ({ store, clock }) => {
      const claimed = await claimNew(store);
      await clock.advance(100);
      const now = await store.now();
      const result = await commitPublishing(store, claimed, [publication(1, art(1))]);
      assert.equal(result.outcome, 'committed');
      assert.equal(refusedOf(result), 0);
      const expected: Publication = {
        subjectId: SUBJECT,
        profile: PROFILE,
        artifactRef: art(1),
        subjectVersion: 1,
        fence: claimed.job.fence ?? -1,
        updatedAt: now,
      };
      assert.deepEqual(await store.publications.get(SUBJECT, PROFILE), expected);
    });

    test('a lower subject version is refused, counted, and leaves the publication unchanged', async ({ store }) => {
      const first = await claimNew(store);
      const second = await claimNew(store);
      assert.equal(refusedOf(await commitPublishing(store, first, [publication(2, art(1))])), 0);
      const before = await store.publications.get(SUBJECT, PROFILE);
      const result = await commitPublishing(store, second, [publication(1, art(2))]);
      assert.equal(refusedOf(result), 1, 'the stage still commits; the publication is counted refused');
      assert.deepEqual(await store.publications.get(SUBJECT, PROFILE), before);
      assert.equal((await store.reads.getRun(second.run.id))?.stages[0]?.status, 'succeeded');
    });

    test('a higher subject version replaces the publication even from a lease with a lower fence', async ({ store }) => {
      const older = await claimNew(store);
      const newer = await claimNew(store);
      assert.ok((newer.job.fence ?? 0) > (older.job.fence ?? Infinity));
      assert.equal(refusedOf(await commitPublishing(store, newer, [publication(1, art(1))])), 0);
      assert.equal(refusedOf(await commitPublishing(store, older, [publication(2, art(2))])), 0);
      const stored = await store.publications.get(SUBJECT, PROFILE);
      assert.equal(stored?.subjectVersion, 2);
      assert.equal(stored?.artifactRef, art(2));
      assert.equal(stored?.fence, older.job.fence);
    });

    test('the same version from a later claim (higher fence) replaces it; from an earlier claim it is refused', async ({ store }) => {
      const early = await claimNew(store);
      const late = await claimNew(store);
      const later = await claimNew(store);
      assert.equal(refusedOf(await commitPublishing(store, late, [publication(3, art(1))])), 0);
      assert.equal(refusedOf(await commitPublishing(store, early, [publication(3, art(2))])), 1, 'a lower fence loses');
      assert.equal((await store.publications.get(SUBJECT, PROFILE))?.artifactRef, art(1));
      assert.equal(refusedOf(await commitPublishing(store, later, [publication(3, art(3))])), 0);
      const stored = await store.publications.get(SUBJECT, PROFILE);
      assert.equal(stored?.artifactRef, art(3));
      assert.equal(stored?.fence, later.job.fence);
    });

    test('a commit item refused for its lease publishes nothing, and does not stop the items after it', async ({ store, clock }) => {
      const stale = await claimNew(store);
      await clock.advance(60_000);
      const current = await claimOne(store);
      assert.equal(current.job.id, stale.job.id, 'the expired lease was taken over');
      const other = await claimNew(store);
      const results = await store.jobs.commit([
        { type: 'complete', lease: leaseOf(stale), output: {}, durationMs: 1, next: null, publish: [publication(9, art(1))] },
        {
          type: 'complete',
          lease: leaseOf(other),
          output: {},
          durationMs: 1,
          next: null,
          publish: [publication(1, art(2), { subjectId: 'asset_other' })],
        },
      ]);
      assert.deepEqual(results[0], { outcome: 'lease_lost' });
      assert.equal(refusedOf(results[1] ?? { outcome: 'lease_lost' }), 0);
      assert.equal(await store.publications.get(SUBJECT, PROFILE), null);
      assert.equal((await store.publications.get('asset_other', PROFILE))?.artifactRef, art(2));
    });

    test('one item sets several publications at once and counts only those refused', async ({ store }) => {
      const first = await claimNew(store);
      assert.equal(refusedOf(await commitPublishing(store, first, [publication(5, art(1), { profile: 'thumbnail' })])), 0);
      const second = await claimNew(store);
      const result = await commitPublishing(store, second, [
        publication(4, art(2), { profile: 'preview' }),
        publication(4, art(3), { profile: 'thumbnail' }),
        publication(4, art(4), { profile: 'poster' }),
      ]);
      assert.equal(refusedOf(result), 1);
      const stored = await Promise.all(['preview', 'thumbnail', 'poster'].map((p) => store.publications.get(SUBJECT, p)));
      assert.deepEqual(
        stored.map((p) => [p?.artifactRef, p?.subjectVersion, p?.fence]),
        [
          [art(2), 4, second.job.fence],
          [art(1), 5, first.job.fence],
          [art(4), 4, second.job.fence],
        ],
      );
    });
  });
}
