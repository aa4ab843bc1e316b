/**
 * Runs the store conformance suite on the Redis store: every test gets its own key prefix on this
 * process's private redis-server (or `KILN_REDIS_URL`), its keys deleted by `destroy`. The suite's
 * fake clock is passed in as the store's test clock, so lease expiry is a clock advance, not a
 * sleep. Skipped, with the reason printed, where no Redis is available (never in CI).
 */
import { after, describe } from 'node:test';
import { redisSkipReason } from '../support/redis-server.ts';
import { redisStoreHarness } from '../support/redis-stores.ts';
import { describeStoreSuite } from './store-suite.ts';

const skip = redisSkipReason();

describe('redis', { skip }, () => {
  const harness = redisStoreHarness();
  after(async () => {
    if (skip === undefined) await harness.end();
  });

  describeStoreSuite('redis', harness);
});
