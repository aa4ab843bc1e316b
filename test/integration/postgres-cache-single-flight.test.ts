/**
 * Single-flight across connections on PostgreSQL: two stores with pools of their own (to the
 * server, two sets of sessions, as two processes would be) share one schema and race
 * `cache.acquire` for the same keys. Of all the callers of a key exactly one becomes its
 * builder — when the key is missing, when its builder's lease expired, and when a stale value
 * needs one revalidator — and every other caller is told to wait (or served the stale value).
 */
import assert from 'node:assert/strict';
import { after, afterEach, describe, it } from 'node:test';
import pg from 'pg';
import { createPostgresStore } from '../../src/stores/postgres/index.ts';
import { createFakeClock, type FakeClock } from '../../src/core/clock.ts';
import type { CacheAcquireResult } from '../../src/core/ports/cache.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { createSchemaName, postgresSkipReason, sharedPostgres } from '../support/postgres-cluster.ts';

const skip = postgresSkipReason();
const KEYS = Array.from({ length: 50 }, (_, i) => `key-${i}`);
/** Callers per key on each store. */
const CALLERS = 4;
const CACHE = 'qr';

/** One acquire of `key` by caller `n` of `side`, with a token naming the caller. */
function acquire(store: Store, side: string, key: string, n: number, leaseMs = 30_000): Promise<CacheAcquireResult> {
  const token = `${side}-${key}-${n}`;
  return store.cache.acquire({ cache: CACHE, key, owner: side, token, leaseMs });
}

/** Every key acquired CALLERS times by each store at once, interleaved; results by key. */
async function race(a: Store, b: Store, keys: readonly string[], round: string): Promise<Map<string, CacheAcquireResult[]>> {
  const calls = keys.flatMap((key) =>
    Array.from({ length: CALLERS }, (_, n) => [acquire(a, `a${round}`, key, n), acquire(b, `b${round}`, key, n)]).flat(),
  );
  const results = await Promise.all(calls);
  const byKey = new Map<string, CacheAcquireResult[]>();
  results.forEach((result) => {
    const list = byKey.get(result.entry.key) ?? [];
    list.push(result);
    byKey.set(result.entry.key, list);
  });
  return byKey;
}

/** The one result of `key` in `state` (asserting there is exactly one). */
function onlyOne(results: readonly CacheAcquireResult[], predicate: (r: CacheAcquireResult) => boolean, key: string): CacheAcquireResult {
  const matching = results.filter(predicate);
  assert.equal(matching.length, 1, `${key}: exactly one caller takes the builder lease`);
  return matching[0] as CacheAcquireResult;
}

describe('postgres single-flight cache across pools', { skip }, () => {
  const opened: Store[] = [];
  const schemas: string[] = [];
  let admin: pg.Pool | undefined;

  /** Two stores, each with its own pool, on one new migrated schema. */
  const openPair = async (clock?: FakeClock): Promise<[Store, Store]> => {
    const schema = createSchemaName();
    schemas.push(schema);
    const url = (await sharedPostgres()).url;
    const make = () => createPostgresStore({ connectionString: url, schema, poolSize: 10, ...(clock ? { clock } : {}) });
    const pair: [Store, Store] = [make(), make()];
    opened.push(...pair);
    await Promise.all(pair.map((store) => store.migrate()));
    return pair;
  };

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    admin ??= new pg.Pool({ connectionString: (await sharedPostgres()).url, max: 1 });
    for (const schema of schemas.splice(0)) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });
  after(async () => {
    await admin?.end();
    // The cluster is not stopped here: pg-pool's end() resolves before its sockets close, and a
    // server shutting down then would error on them. The exit hook stops it.
  });

  it('of eight callers per key on two pools, exactly one builds each of 50 missing keys; the rest wait, then hit', async () => {
    const [a, b] = await openPair();
    const raced = await race(a, b, KEYS, '1');
    const fences = new Set<number>();
    for (const key of KEYS) {
      const results = raced.get(key) ?? [];
      assert.equal(results.length, 2 * CALLERS);
      const builder = onlyOne(results, (r) => r.state === 'build', key);
      assert.ok(results.every((r) => r === builder || r.state === 'building'), `${key}: every other caller waits`);
      for (const r of results) assert.equal(r.entry.builderToken, builder.entry.builderToken, `${key}: waiters see the one builder`);
      fences.add(builder.entry.builderFence ?? -1);
      const token = builder.entry.builderToken ?? '';
      const finisher = token.startsWith('a') ? a : b;
      assert.equal(await finisher.cache.complete({ cache: CACHE, key, token, value: { artifact: key }, ttlMs: 60_000, staleMs: 0 }), true);
    }
    assert.equal(fences.size, KEYS.length, 'every build has its own fence');

    const again = await race(a, b, KEYS, '2');
    for (const key of KEYS) {
      const results = again.get(key) ?? [];
      assert.ok(results.every((r) => r.state === 'hit'), `${key}: a built key is a hit for everyone`);
      assert.deepEqual(results[0]?.entry.value, { artifact: key });
    }
  });

  it('when builder leases expire or values go stale, exactly one racing caller per key takes over or revalidates', async () => {
    const clock = createFakeClock();
    const [a, b] = await openPair(clock);
    const first = await Promise.all(KEYS.map((key) => acquire(a, 'first', key, 0, 1_000)));
    // Even keys get a value that turns stale; odd keys keep a builder whose lease will expire.
    const even = KEYS.filter((_, i) => i % 2 === 0);
    const odd = KEYS.filter((_, i) => i % 2 === 1);
    for (const key of even) {
      const token = `first-${key}-0`;
      assert.equal(await a.cache.complete({ cache: CACHE, key, token, value: { v: 1 }, ttlMs: 1_000, staleMs: 60_000 }), true);
    }
    await clock.advance(2_000);

    const raced = await race(a, b, KEYS, '2');
    const oldFence = new Map(first.map((r) => [r.entry.key, r.entry.builderFence ?? Infinity]));
    for (const key of even) {
      const results = raced.get(key) ?? [];
      const revalidator = onlyOne(results, (r) => r.state === 'stale' && r.revalidate, key);
      assert.ok(results.every((r) => r.state === 'stale'), `${key}: everyone is served the stale value`);
      assert.ok(results.every((r) => r === revalidator || (r.state === 'stale' && !r.revalidate)));
      assert.deepEqual(revalidator.entry.value, { v: 1 });
    }
    for (const key of odd) {
      const results = raced.get(key) ?? [];
      const builder = onlyOne(results, (r) => r.state === 'build', key);
      assert.ok(results.every((r) => r === builder || r.state === 'building'), `${key}: every other caller waits`);
      assert.ok((builder.entry.builderFence ?? 0) > (oldFence.get(key) ?? Infinity), `${key}: the takeover has a higher fence`);
      const stale = await a.cache.complete({ cache: CACHE, key, token: `first-${key}-0`, value: { v: 0 }, ttlMs: 1_000, staleMs: 0 });
      assert.equal(stale, false, `${key}: the builder that was taken over cannot complete`);
    }
  });
});
