/**
 * On Redis, a submission does not queue behind the store's other commands: Redis runs one
 * connection's commands in order, so submissions have a connection of their own (context.ts).
 * The store's script connection is held by a blocking BLPOP (as a long claim or commit script
 * would hold it); a submit must still complete, and the BLPOP must still be waiting when it does.
 * No timing is asserted: on one shared connection the submit could only end after the BLPOP.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { systemClock } from '../../src/core/clock.ts';
import { createIdGenerator } from '../../src/core/ids.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { keyPrefix } from '../../src/stores/redis/index.ts';
import { buildRedisStore } from '../../src/stores/redis/store.ts';
import { createWakeHub } from '../../src/stores/redis/wake-hub.ts';
import { submit } from '../conformance/fixture.ts';
import { createStoreName, redisSkipReason } from '../support/redis-server.ts';
import { deleteStoreKeys, useRedisStores } from '../support/redis-stores.ts';

describe('Redis submissions', { skip: redisSkipReason() }, () => {
  const redis = useRedisStores();

  it('complete while the store’s script connection is blocked', { timeout: 20_000 }, async () => {
    const name = createStoreName();
    const prefix = keyPrefix(name);
    const conn = new Redis(await redis.url(), { maxRetriesPerRequest: 2, autoResendUnfulfilledCommands: false });
    const store = buildRedisStore({ redis: conn, prefix, wakes: createWakeHub(conn, prefix, 'test', silentLogger), ids: createIdGenerator(systemClock), clock: undefined, logger: silentLogger });
    const admin = await redis.admin();
    try {
      await store.migrate();
      const gate = `${prefix}test-gate`;
      let blockEnded = false;
      const blocked = conn.blpop(gate, 15).finally(() => (blockEnded = true));
      // The BLPOP is on the server before the submit is sent.
      while (!String(await admin.client('LIST')).includes('cmd=blpop')) await new Promise((resolve) => setTimeout(resolve, 10));

      const run = await submit(store);
      assert.equal(blockEnded, false, 'the submit waited for the blocked connection');
      assert.equal(run.status, 'queued');

      await admin.lpush(gate, 'go');
      assert.deepEqual(await blocked, [gate, 'go']);
    } finally {
      await store.close();
      await deleteStoreKeys(admin, name);
    }
  });
});
