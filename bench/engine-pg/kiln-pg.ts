/**
 * Child process: kiln on the PostgreSQL store, in its own fresh schema, one worker with the
 * default settings (per-stage concurrency C); the scenarios are kiln-scenarios.ts's.
 * Usage: KILN_PG_URL=... node --import tsx bench/engine-pg/kiln-pg.ts --system kiln --scenario noop|chains --count N --concurrency C
 */
import pg from 'pg';
import { createPostgresStore } from '../../src/stores/postgres/index.ts';
import { emitResultLine } from '../engine/engine-result.ts';
import { prefetchLikeBatched, runKilnChild } from './kiln-scenarios.ts';
import { benchSchemaName, parsePgChildArgs, type PgChildArgs } from './pg-child-args.ts';
import { measurePhase, type PgBenchResult } from './pg-bench-result.ts';

/** `kiln-prefetch` holds as many jobs as graphile-worker's batched preset; `kiln` uses defaults. */
function prefetchFor(args: PgChildArgs): number {
  return args.system === 'kiln-prefetch' ? prefetchLikeBatched(args.scenario, args.concurrency) : 0;
}

async function dropSchema(connectionString: string, schema: string): Promise<void> {
  const admin = new pg.Client({ connectionString });
  await admin.connect();
  await admin.query(`drop schema if exists ${schema} cascade`).finally(() => admin.end());
}

async function main(): Promise<PgBenchResult> {
  const args = parsePgChildArgs(process.argv.slice(2));
  if (args.system !== 'kiln' && args.system !== 'kiln-prefetch') throw new Error(`kiln child cannot run ${args.system}`);
  const schema = benchSchemaName('kiln', args.scenario);
  const prefetch = prefetchFor(args);
  try {
    const result = await runKilnChild({
      ...args,
      prefetch,
      openStore: async () => {
        const store = createPostgresStore({ connectionString: args.connectionString, schema });
        await store.migrate();
        return store;
      },
      // Pre-filling is not timed; its pool is closed before the counters are read.
      measure: (run) => measurePhase({ ...args, run }),
    });
    const settings = args.system === 'kiln' ? 'createPostgresStore defaults; worker defaults' : `stage prefetch ${prefetch}`;
    return { ...result, extra: { ...result.extra, settings } };
  } finally {
    await dropSchema(args.connectionString, schema);
  }
}

emitResultLine(await main());
