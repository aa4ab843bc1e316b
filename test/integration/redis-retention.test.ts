/**
 * Redis retention leaves nothing of a pruned run behind: after runs that went through every
 * kind of key (stage records, ledger, outputs, jobs and their indexes, dead jobs, attempts,
 * runkey, subjects, the finished:<status> indexes, jobrun) are pruned, no key name, member, field
 * or value anywhere under the store's prefix names them; the kept run (a subject's current
 * version) keeps its keys. Skipped, with the reason, where no Redis is available.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { createFakeClock, type FakeClock } from '../../src/core/clock.ts';
import { createIdGenerator } from '../../src/core/ids.ts';
import type { RetentionPolicy } from '../../src/core/ports/retention.ts';
import type { Store } from '../../src/core/ports/store.ts';
import type { Run } from '../../src/core/model.ts';
import { keyPrefix } from '../../src/stores/redis/index.ts';
import { claimOne, complete, failJob, leaseOf, onPipeline, stageJob, submit } from '../conformance/fixture.ts';
import { createStoreName, redisSkipReason } from '../support/redis-server.ts';
import { useRedisStores } from '../support/redis-stores.ts';

const DAY = 86_400_000;
const POLICY: RetentionPolicy = { succeededMs: DAY, failedMs: DAY, cancelledMs: DAY, requestsMs: DAY };

/** Every text stored under `prefix`: key names, and the members, fields and values of each key. */
async function everythingUnder(admin: Redis, prefix: string): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  for await (const batch of admin.scanStream({ match: `${prefix}*`, count: 1000 }) as AsyncIterable<string[]>) {
    for (const key of batch) {
      const type = await admin.type(key);
      const texts =
        type === 'hash' ? await admin.hgetall(key).then((h) => Object.entries(h).flat())
        : type === 'zset' ? await admin.zrange(key, 0, -1)
        : type === 'set' ? await admin.smembers(key)
        : type === 'list' ? await admin.lrange(key, 0, -1)
        : type === 'string' ? [(await admin.get(key)) ?? '']
        : [];
      found.set(key.slice(prefix.length), texts);
    }
  }
  return found;
}

/** The places (key, or key and content) that name `id`. */
function placesNaming(everything: Map<string, string[]>, id: string): string[] {
  const places: string[] = [];
  for (const [key, texts] of everything) {
    if (key.includes(id)) places.push(key);
    else if (texts.some((t) => t.includes(id))) places.push(`${key} (content)`);
  }
  return places;
}

/** Runs through every kind of key, a day old: a succeeded v1 of a subject, its cancelled v2 (the current version, kept), a dead letter, a cancelled run with a request record. */
async function fillScenario(store: Store, clock: FakeClock): Promise<Record<'v1' | 'v2' | 'dead' | 'gone', Run>> {
  await store.migrate();

  const v1 = await submit(store, { ...onPipeline('thumb'), idempotencyKey: 'k1', subjectId: 'asset_1', subjectVersion: 1 });
  for (const [stage, next] of [['a', 'b'], ['b', null]] as const) {
    const claimed = await claimOne(store, `thumb.${stage}`);
    await complete(store, { lease: leaseOf(claimed), output: { done: stage }, durationMs: 1, next: next === null ? null : stageJob(next, { pipeline: 'thumb' }) });
  }
  const v2 = await submit(store, { ...onPipeline('thumb'), subjectId: 'asset_1', subjectVersion: 2 });
  await store.operator.cancelRun(v2.id, 'kept: the current version');
  const dead = await submit(store, onPipeline('dead'));
  await failJob(store, await claimOne(store, 'dead.a'), { action: 'retry', delayMs: 0 });
  await failJob(store, await claimOne(store, 'dead.a'), { action: 'dead_letter', rollback: null });
  const gone = await submit(store, onPipeline('gone'));
  await store.operator.cancelRun(gone.id, 'test');
  await store.requests.remember({ scope: 's', key: 'req-1', requestHash: 'h', value: { run: gone.id } });
  await clock.advance(DAY);
  return { v1, v2, dead, gone };
}

const PRUNED = { runs: 3, stageRecords: 9, ledgerEntries: 2, jobs: 1, attempts: 2, requests: 1 };

describe('Redis retention', { skip: redisSkipReason() }, () => {
  const redis = useRedisStores();

  it('leaves no key, member, field or value of a pruned run behind', async () => {
    const clock = createFakeClock();
    const name = createStoreName();
    const store = await redis.open({ name, clock, ids: createIdGenerator(clock) });
    const { v1, v2, dead, gone } = await fillScenario(store, clock);

    const admin = await redis.admin();
    const before = await everythingUnder(admin, keyPrefix(name));
    for (const run of [v1, dead, gone]) assert.ok(placesNaming(before, run.id).length > 3, `${run.id} is stored under several keys`);

    const pruned = await store.retention.prune(POLICY, 100);
    assert.deepEqual(pruned, PRUNED);
    const after = await everythingUnder(admin, keyPrefix(name));
    for (const run of [v1, dead, gone]) assert.deepEqual(placesNaming(after, run.id), [], `nothing of ${run.id} is left`);
    assert.ok(placesNaming(after, v2.id).length > 3, 'the kept run keeps its keys');
    assert.ok(![...after.keys()].some((key) => key.startsWith('request:')), 'the request record is gone');
    assert.deepEqual(await admin.zrange(`${keyPrefix(name)}requests:created`, 0, -1), []);
  });

  it('layout 4 indexes what a layout-3 store kept (ended runs, request records), so retention prunes it', async () => {
    const clock = createFakeClock();
    const name = createStoreName();
    const store = await redis.open({ name, clock, ids: createIdGenerator(clock) });
    await fillScenario(store, clock);
    const admin = await redis.admin();
    const prefix = keyPrefix(name);
    // As a kiln of layout 3 left it: no finished:<status> index, no requests:created.
    const indexes = (await admin.keys(`${prefix}finished:*`)).concat(`${prefix}requests:created`);
    assert.ok(indexes.length > 2);
    await admin.del(...indexes);
    await admin.hset(`${prefix}meta`, 'schema_version', '3');
    assert.deepEqual(await store.retention.prune(POLICY, 100), { runs: 0, stageRecords: 0, ledgerEntries: 0, jobs: 0, attempts: 0, requests: 0 });

    assert.deepEqual((await store.migrate()).applied, [4, 5]);
    assert.deepEqual(await store.retention.prune(POLICY, 100), PRUNED);
  });
});
