/**
 * Conformance, locks and jobs together: a completion made under a lock (`CompleteStageRequest.lock`)
 * publishes only while the lock's fence is current (nobody took the lock over, it was not reaped),
 * and then with the lock's fence, so a publication made under an older fence than the lock's
 * current one is refused and counted; the stage itself still commits.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { ClaimedJob, CommitResult, LockFence } from '../../../src/core/ports/jobs.ts';
import type { LockAcquireResult } from '../../../src/core/ports/locks.ts';
import type { PublicationRequest } from '../../../src/core/ports/publications.ts';
import type { Store } from '../../../src/core/ports/store.ts';
import type { StoreHarness } from '../fixture.ts';
import { art, claimNew, complete, failure, leaseOf, stageJob, storeTest } from '../fixture.ts';

const SUBJECT = 'asset_42';
const PROFILE = 'preview';
const KEY = 'render:asset_42';
const TTL_MS = 10_000;

/** A publication of `(SUBJECT, PROFILE)`. */
function publication(subjectVersion: number, artifactRef: string): PublicationRequest {
  return { subjectId: SUBJECT, profile: PROFILE, artifactRef, subjectVersion };
}

/** Takes `KEY` for `token`, asserting it was free; returns its fence as a completion names it. */
async function lockFor(store: Store, token: string): Promise<LockFence> {
  const result: LockAcquireResult = await store.locks.acquire({ key: KEY, owner: `w-${token}`, token, ttlMs: TTL_MS });
  assert.equal(result.status, 'acquired');
  return { key: KEY, fence: result.status === 'acquired' ? result.lock.fence : -1 };
}

/** Completes the claimed job under `lock`, publishing `publish`. */
function commitUnder(store: Store, claimed: ClaimedJob, lock: LockFence, publish: readonly PublicationRequest[]): Promise<CommitResult> {
  return complete(store, { lease: leaseOf(claimed), output: { ok: true }, durationMs: 1, next: stageJob('b'), publish, lock });
}

/** How many publications the committed item had refused (absent counts as 0). */
function refusedOf(result: CommitResult | undefined): number {
  assert.equal(result?.outcome, 'committed');
  return result?.outcome === 'committed' ? (result.publicationsRefused ?? 0) : -1;
}

/** Completions fenced by a lock. */
export function describeLockedPublications(harness: StoreHarness): void {
  describe('commit: publications fenced by a lock', () => {
    const test = storeTest(harness);

    test('under a current lock the publication is set with the lock fence, above the lease fence', async ({ store }) => {
      const claimed = await claimNew(store);
      const lock = await lockFor(store, 'a');
      assert.ok(lock.fence > (claimed.job.fence ?? Infinity));
      assert.equal(refusedOf(await commitUnder(store, claimed, lock, [publication(1, art(1))])), 0);
      const stored = await store.publications.get(SUBJECT, PROFILE);
      assert.equal(stored?.artifactRef, art(1));
      assert.equal(stored?.fence, lock.fence);
    });

    test('a lock taken over by a newer holder refuses the old holder’s publications; its stage still commits', async ({ store, clock }) => {
      const old = await claimNew(store);
      const oldLock = await lockFor(store, 'a');
      await clock.advance(TTL_MS);
      const fresh = await claimNew(store);
      const freshLock = await lockFor(store, 'b');
      assert.equal(refusedOf(await commitUnder(store, fresh, freshLock, [publication(3, art(2))])), 0);
      // The old holder's lease on its job is still good; only its lock moved on.
      const result = await commitUnder(store, old, oldLock, [publication(4, art(1)), publication(5, art(3))]);
      assert.equal(refusedOf(result), 2, 'every publication of the item is refused, even of a higher version');
      const stored = await store.publications.get(SUBJECT, PROFILE);
      assert.deepEqual([stored?.artifactRef, stored?.subjectVersion, stored?.fence], [art(2), 3, freshLock.fence]);
      assert.equal((await store.reads.getRun(old.run.id))?.stages[0]?.status, 'succeeded');
    });

    test('a lock that expired and was reaped fences nothing any more: its publications are refused', async ({ store, clock }) => {
      const claimed = await claimNew(store);
      const lock = await lockFor(store, 'a');
      await clock.advance(TTL_MS);
      assert.equal(await store.locks.reap(), 1);
      assert.equal(refusedOf(await commitUnder(store, claimed, lock, [publication(1, art(1))])), 1);
      assert.equal(await store.publications.get(SUBJECT, PROFILE), null);
    });

    test('an expired lock nobody took over still fences its holder’s publications', async ({ store, clock }) => {
      const claimed = await claimNew(store);
      const lock = await lockFor(store, 'a');
      await clock.advance(TTL_MS + 1);
      assert.equal(refusedOf(await commitUnder(store, claimed, lock, [publication(1, art(1))])), 0);
      assert.equal((await store.publications.get(SUBJECT, PROFILE))?.fence, lock.fence);
    });

    test('in a batch, each item is fenced by its own lock, in the set-wise path and item by item', async ({ store, clock }) => {
      const stale = await claimNew(store);
      const staleLock = await lockFor(store, 'a');
      await clock.advance(TTL_MS);
      const current = await claimNew(store);
      const currentLock = await lockFor(store, 'b');
      const other = await claimNew(store);
      const otherLock = { key: 'other', fence: 0 };
      const own = (c: ClaimedJob, lock: LockFence, p: PublicationRequest) =>
        ({ type: 'complete', lease: leaseOf(c), output: {}, durationMs: 1, next: null, publish: [p], lock }) as const;
      const setWise = await store.jobs.commit([own(stale, staleLock, publication(7, art(1))), own(current, currentLock, publication(6, art(2)))]);
      assert.deepEqual(setWise.map(refusedOf), [1, 0]);
      assert.equal((await store.publications.get(SUBJECT, PROFILE))?.artifactRef, art(2));

      const failing = await claimNew(store);
      const itemwise = await store.jobs.commit([
        { type: 'fail', lease: leaseOf(failing), error: failure('transient'), durationMs: 1, decision: { action: 'retry', delayMs: 0 } },
        own(other, otherLock, { ...publication(1, art(3)), subjectId: 'asset_other' }),
      ]);
      assert.deepEqual(itemwise.map((r) => r.outcome), ['committed', 'committed']);
      assert.equal(refusedOf(itemwise[1]), 1, 'a lock that does not exist fences nothing');
      assert.equal(await store.publications.get('asset_other', PROFILE), null);
    });

    test('a completion under a lost lock without publications commits as usual', async ({ store, clock }) => {
      const claimed = await claimNew(store);
      const lock = await lockFor(store, 'a');
      await clock.advance(TTL_MS);
      await lockFor(store, 'b');
      const result = await complete(store, { lease: leaseOf(claimed), output: { ok: true }, durationMs: 1, next: null, lock });
      assert.equal(refusedOf(result), 0);
      assert.equal((await store.reads.getRun(claimed.run.id))?.run.status, 'succeeded');
    });
  });
}
