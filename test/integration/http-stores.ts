/**
 * The stores the HTTP suites run on, so one test body covers every store: memory and SQLite
 * always, PostgreSQL and Redis when available (a private server, or `KILN_PG_URL` /
 * `KILN_REDIS_URL`; skipped with the reason printed otherwise, and required in CI). Each
 * PostgreSQL test gets a fresh schema, each Redis test a fresh store name (key prefix), dropped
 * when the test closes its harness.
 */
import { join } from 'node:path';
import pg from 'pg';
import { createMemoryStore } from '../../src/stores/memory/index.ts';
import { createPostgresStore } from '../../src/stores/postgres/index.ts';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { s3Artifacts } from '../support/artifact-cases.ts';
import { createSchemaName, postgresSkipReason, sharedPostgres } from '../support/postgres-cluster.ts';
import { redisSkipReason } from '../support/redis-server.ts';
import { createRedisTestStore, stopRedisAfterAll } from '../support/redis-stores.ts';
import type { StoreFactory } from './http-harness.ts';

/** One store the HTTP suites run on. */
export interface HttpStoreCase {
  name: string;
  /** Why this store's tests are skipped here, or undefined when they run. */
  skip: string | undefined;
  create: StoreFactory;
}

/** Drops a test schema and everything in it. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
  } finally {
    await client.end();
  }
}

/** A PostgreSQL store in a fresh schema of the shared test server, dropped on destroy. */
export const postgresHttpStore: StoreFactory = async () => {
  const { url } = await sharedPostgres();
  const schema = createSchemaName('kiln_http_');
  return {
    store: createPostgresStore({ connectionString: url, schema }),
    destroy: () => dropSchema(url, schema),
  };
};

/** A Redis store under a fresh name on this process's server, its keys deleted on destroy. */
export const redisHttpStore: StoreFactory = () => createRedisTestStore();

/**
 * memory, sqlite, postgres and redis, in that order, with filesystem artifacts; with
 * `s3Artifacts`, then memory with S3 artifacts (the suites of assets and QR, whose bytes go
 * through the artifact store). Call it at the top level of a test file: it registers the stop of
 * the file's Redis server after its last test.
 */
export function httpStoreCases(options: { s3Artifacts?: boolean } = {}): HttpStoreCase[] {
  const redisSkip = redisSkipReason();
  if (redisSkip === undefined) stopRedisAfterAll();
  return [
    { name: 'memory', skip: undefined, create: () => createMemoryStore() },
    { name: 'sqlite', skip: undefined, create: (dir) => createSqliteStore({ path: join(dir, 'kiln.db') }) },
    { name: 'postgres', skip: postgresSkipReason(), create: postgresHttpStore },
    { name: 'redis', skip: redisSkip, create: redisHttpStore },
    ...(options.s3Artifacts ? [{ name: 'memory with S3 artifacts', skip: undefined, create: () => ({ store: createMemoryStore(), destroy: async () => {}, artifacts: s3Artifacts }) }] : []),
  ];
}
