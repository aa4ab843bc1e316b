/**
 * Conformance, tokens sub-port: API tokens, kept with the hash of their secret only.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { PipelineError } from '../../src/core/errors.ts';
import { TokenScope, type NewApiToken } from '../../src/core/ports/tokens.ts';
import type { StoreHarness } from './fixture.ts';
import { storeTest } from './fixture.ts';

/** A new token's fields; `hash` stands for the sha256 of its secret. */
function newToken(hash: string, extra: Partial<NewApiToken> = {}): NewApiToken {
  return { tenant: 'acme', name: null, scopes: [TokenScope.read], secretHash: hash, last4: hash.slice(-4), expiresAt: null, ...extra };
}

/** Declares the tokens sub-port's tests: `create`, `getByHash`, `list`, `revoke`, `exist`. */
export function describeTokensPort(harness: StoreHarness): void {
  describe('tokens sub-port', () => {
    const test = storeTest(harness);

    test('create stores a token stamped with the store clock; getByHash finds it by the hash only', async ({ store, clock }) => {
      const now = await store.now();
      const created = await store.tokens.create(
        newToken('a'.repeat(64), { name: 'ci', scopes: [TokenScope.submit, TokenScope.read], expiresAt: now + 60_000 }),
      );
      assert.match(created.id, /^tok_/);
      assert.deepEqual(created, {
        id: created.id,
        tenant: 'acme',
        name: 'ci',
        scopes: [TokenScope.read, TokenScope.submit],
        last4: 'aaaa',
        createdAt: now,
        expiresAt: now + 60_000,
        revokedAt: null,
      });
      assert.equal('secretHash' in created, false, 'the hash is never handed out');
      await clock.advance(10);
      assert.deepEqual(await store.tokens.getByHash('a'.repeat(64)), created);
      assert.equal(await store.tokens.getByHash('b'.repeat(64)), null);
    });

    test('exist is false until the first token, and stays true after every token is revoked', async ({ store }) => {
      assert.equal(await store.tokens.exist(), false);
      const token = await store.tokens.create(newToken('c'.repeat(64)));
      assert.equal(await store.tokens.exist(), true);
      await store.tokens.revoke(token.id);
      assert.equal(await store.tokens.exist(), true);
    });

    test('list shows every token oldest first, revoked ones included', async ({ store, clock }) => {
      assert.deepEqual(await store.tokens.list(), []);
      const first = await store.tokens.create(newToken('1'.repeat(64), { tenant: 't1', scopes: [TokenScope.admin] }));
      await clock.advance(5);
      const second = await store.tokens.create(newToken('2'.repeat(64), { tenant: 't2', scopes: [TokenScope.operate, TokenScope.read] }));
      await clock.advance(5);
      const third = await store.tokens.create(newToken('3'.repeat(64), { name: 'dashboard' }));
      const revoked = await store.tokens.revoke(second.id);
      assert.deepEqual(await store.tokens.list(), [first, revoked, third]);
    });

    test('revoke stamps revokedAt once; getByHash still finds the revoked token; unknown ids are NOT_FOUND', async ({ store, clock }) => {
      const token = await store.tokens.create(newToken('d'.repeat(64)));
      await clock.advance(1_000);
      const revokedAt = await store.now();
      const revoked = await store.tokens.revoke(token.id);
      assert.deepEqual(revoked, { ...token, revokedAt });
      await clock.advance(1_000);
      assert.deepEqual(await store.tokens.revoke(token.id), revoked, 'a second revoke keeps the first time');
      assert.deepEqual(await store.tokens.getByHash('d'.repeat(64)), revoked);
      await assert.rejects(store.tokens.revoke('tok_unknown'), (err: PipelineError) => err.code === 'NOT_FOUND');
    });

    test('concurrent creates each get their own id; concurrent revokes agree on one time', async ({ store }) => {
      const tokens = await Promise.all(Array.from({ length: 6 }, (_, i) => store.tokens.create(newToken(String(i).repeat(64)))));
      assert.equal(new Set(tokens.map((t) => t.id)).size, 6);
      const target = tokens[0];
      assert.ok(target);
      const revokes = await Promise.all(Array.from({ length: 4 }, () => store.tokens.revoke(target.id)));
      for (const r of revokes) assert.deepEqual(r, revokes[0]);
      assert.equal((await store.tokens.list()).length, 6);
    });
  });
}
