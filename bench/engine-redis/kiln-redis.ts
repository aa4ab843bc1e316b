/**
 * Child process: kiln on the Redis store (a store name of its own on the suite's server), one
 * worker with the default settings (per-stage concurrency C); the scenarios are those of
 * engine-pg/kiln-scenarios.ts, so kiln does on Redis exactly what it does on PostgreSQL.
 * `kiln-redis-prefetch` also claims ahead (stage prefetch, as `kiln-prefetch` on PostgreSQL).
 * Usage: KILN_BENCH_REDIS_URL=... node --import tsx bench/engine-redis/kiln-redis.ts --system kiln-redis --scenario noop|chains --count N --concurrency C
 */
import { createRedisStore } from '../../src/stores/redis/index.ts';
import { emitResultLine } from '../engine/engine-result.ts';
import { prefetchLikeBatched, runKilnChild } from '../engine-pg/kiln-scenarios.ts';
import { measureRedisPhase, type RedisBenchResult } from './redis-bench-result.ts';
import { parseRedisChildArgs } from './redis-child-args.ts';

async function main(): Promise<RedisBenchResult> {
  const args = parseRedisChildArgs(process.argv.slice(2));
  if (args.system === 'bullmq') throw new Error(`kiln child cannot run ${args.system}`);
  const name = `bench_${args.scenario}_${process.pid}`;
  // kiln-redis-prefetch claims ahead as much as graphile-worker's batched preset holds (as kiln-prefetch on PostgreSQL).
  const prefetch = args.system === 'kiln-redis-prefetch' ? prefetchLikeBatched(args.scenario, args.concurrency) : 0;
  const result = await runKilnChild({
    ...args,
    prefetch,
    openStore: async () => {
      const store = createRedisStore({ url: args.url, name });
      await store.migrate();
      return store;
    },
    measure: (run) => measureRedisPhase({ ...args, run }),
  });
  const settings = prefetch === 0 ? 'createRedisStore defaults; worker defaults' : `stage prefetch ${prefetch}`;
  return { ...result, extra: { ...result.extra, settings, storeName: name } };
}

emitResultLine(await main());
