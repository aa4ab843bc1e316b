/**
 * PostgreSQL stores for tests, each on a schema of its own on this process's PostgreSQL
 * (see postgres-cluster.ts), closed and dropped when the test is done: `usePostgresStores` for
 * test files that open stores themselves, `postgresStoreHarness` for the conformance suite.
 */
import { after, afterEach } from 'node:test';
import pg from 'pg';
import type { FakeClock } from '../../src/core/clock.ts';
import type { IdGenerator } from '../../src/core/ids.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { createPostgresStore, type PostgresStore, type PostgresStoreOptions } from '../../src/stores/postgres/index.ts';
import type { StoreHarness } from '../conformance/store-suite.ts';
import { createSchemaName, sharedPostgres } from './postgres-cluster.ts';

/** A superuser pool on this process's PostgreSQL; restarts end its idle connections, it reconnects. */
function createAdminPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('error', () => {});
  return pool;
}

/** What {@link usePostgresStores} gives a test file. */
export interface PostgresTestStores {
  /** The URL of this process's PostgreSQL. */
  url(): Promise<string>;
  /** A superuser pool (two connections) for setting up and checking schemas. */
  admin(): Promise<pg.Pool>;
  /** A new schema name, dropped after the test. */
  newSchema(): string;
  /**
   * A store, closed after the test, on `options.schema` (a new schema by default; dropped after
   * the test either way); the other options as `createPostgresStore` takes them.
   */
  open(options?: Partial<PostgresStoreOptions>): Promise<PostgresStore>;
}

/**
 * Stores and schemas for the tests of one `describe` (call it in the `describe` body): after each
 * test its stores are closed and its schemas dropped; after the file, the admin pool is closed and
 * the server stopped.
 */
export function usePostgresStores(): PostgresTestStores {
  const opened: Store[] = [];
  const schemas = new Set<string>();
  let admin: pg.Pool | undefined;
  const url = async (): Promise<string> => (await sharedPostgres()).url;
  const adminPool = async (): Promise<pg.Pool> => (admin ??= createAdminPool(await url()));

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    const pool = await adminPool();
    for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    schemas.clear();
  });
  after(async () => {
    await admin?.end();
    await (await sharedPostgres()).stop();
  });

  const newSchema = (): string => {
    const schema = createSchemaName();
    schemas.add(schema);
    return schema;
  };
  return {
    url,
    admin: adminPool,
    newSchema,
    async open(options = {}) {
      const schema = options.schema ?? newSchema();
      schemas.add(schema);
      const store = createPostgresStore({ connectionString: await url(), ...options, schema });
      opened.push(store);
      return store;
    },
  };
}

/** Options of {@link postgresStoreHarness}. */
export interface PostgresHarnessOptions {
  /** Prefix of the schema names (see `createSchemaName`). */
  schemaPrefix?: string;
  /** Runs on each new schema before its store is created (e.g. loads a fixture into it). */
  prepare?: (url: string, schema: string) => Promise<void>;
}

/**
 * A conformance harness whose stores each get a new schema (dropped by `destroy`) and the suite's
 * fake clock as their test clock, so lease expiry is a clock advance, not a sleep. `end` closes
 * the admin pool and stops the server (an `after` hook of the calling file).
 */
export function postgresStoreHarness(options: PostgresHarnessOptions = {}): StoreHarness & { end(): Promise<void> } {
  const schemas = new WeakMap<Store, string>();
  let admin: pg.Pool | undefined;
  return {
    create: async ({ clock, ids }: { clock: FakeClock; ids: IdGenerator }) => {
      const url = (await sharedPostgres()).url;
      const schema = createSchemaName(options.schemaPrefix);
      await options.prepare?.(url, schema);
      const store = createPostgresStore({ connectionString: url, schema, clock, ids, poolSize: 10 });
      schemas.set(store, schema);
      return store;
    },
    destroy: async (store) => {
      await store.close();
      const schema = schemas.get(store);
      admin ??= createAdminPool((await sharedPostgres()).url);
      if (schema !== undefined) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    },
    end: async () => {
      await admin?.end();
      await (await sharedPostgres()).stop();
    },
  };
}
