/**
 * Conformance, publications sub-port: reading, listing and removing the `(subject, profile) ->
 * artifact` pointers. Setting them is a commit's job (see jobs/publish.ts); here a commit only
 * puts them in place.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { PublicationRequest } from '../../src/core/ports/publications.ts';
import type { StoreHarness } from './fixture.ts';
import { art, publish, storeTest } from './fixture.ts';

const SUBJECT = 'asset_42';

/** A publication of `SUBJECT` at version 1 unless overridden. */
function publication(profile: string, artifactRef: string, overrides: Partial<PublicationRequest> = {}): PublicationRequest {
  return { subjectId: SUBJECT, profile, artifactRef, subjectVersion: 1, ...overrides };
}

/** Declares the publications sub-port's tests: `get`, `list`, `delete`. */
export function describePublicationsPort(harness: StoreHarness): void {
  describe('publications sub-port', () => {
    const test = storeTest(harness);

    test('get is null for a subject or profile never published', async ({ store }) => {
      assert.equal(await store.publications.get(SUBJECT, 'preview'), null);
      await publish(store, [publication('preview', art(1))]);
      assert.equal((await store.publications.get(SUBJECT, 'preview'))?.artifactRef, art(1));
      assert.equal(await store.publications.get(SUBJECT, 'thumbnail'), null);
      assert.equal(await store.publications.get('asset_other', 'preview'), null);
    });

    test('list is empty for a subject never published', async ({ store }) => {
      assert.deepEqual(await store.publications.list(SUBJECT), []);
    });

    test('list returns every publication of that subject only, by profile name', async ({ store }) => {
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

    test('delete removes the listed profiles only and counts what it removed', async ({ store }) => {
      await publish(store, [publication('a', art(1)), publication('b', art(2)), publication('c', art(3))]);
      assert.equal(await store.publications.delete(SUBJECT, ['b', 'missing']), 1);
      assert.equal(await store.publications.get(SUBJECT, 'b'), null);
      assert.deepEqual((await store.publications.list(SUBJECT)).map((p) => p.profile), ['a', 'c']);
      assert.equal(await store.publications.delete(SUBJECT, []), 0, 'an empty list removes none');
      assert.equal((await store.publications.list(SUBJECT)).length, 2);
    });

    test('delete without profiles removes every profile of the subject and no other subject', async ({ store }) => {
      await publish(store, [publication('a', art(1)), publication('b', art(2)), publication('a', art(3), { subjectId: 'asset_other' })]);
      assert.equal(await store.publications.delete(SUBJECT), 2);
      assert.equal(await store.publications.get(SUBJECT, 'a'), null);
      assert.deepEqual(await store.publications.list(SUBJECT), []);
      assert.equal((await store.publications.get('asset_other', 'a'))?.artifactRef, art(3));
      assert.equal(await store.publications.delete(SUBJECT), 0, 'nothing left to remove');
    });

    test('delete of an unknown subject removes nothing', async ({ store }) => {
      await publish(store, [publication('a', art(1))]);
      assert.equal(await store.publications.delete('asset_unknown'), 0);
      assert.equal(await store.publications.delete('asset_unknown', ['a']), 0);
      assert.equal((await store.publications.list(SUBJECT)).length, 1);
    });

    test('after delete a later commit publishes the pair again, even at a lower version', async ({ store }) => {
      await publish(store, [publication('a', art(1), { subjectVersion: 5 })]);
      assert.equal(await store.publications.delete(SUBJECT), 1);
      await publish(store, [publication('a', art(2), { subjectVersion: 1 })]);
      const stored = await store.publications.get(SUBJECT, 'a');
      assert.equal(stored?.artifactRef, art(2));
      assert.equal(stored?.subjectVersion, 1);
    });
  });
}
