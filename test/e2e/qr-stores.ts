/**
 * The stores the end-to-end tests run their kiln processes on: a SQLite file in the test's temp
 * directory, PostgreSQL (a private cluster or `KILN_PG_URL`) in a schema of the test's own, and
 * Redis (a private redis-server or `KILN_REDIS_URL`) under a store name of the test's own, dropped
 * afterwards. PostgreSQL and Redis are skipped with the reason printed when there is none here,
 * and required in CI (the skip checks throw there).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { createPostgresStore } from '../../src/stores/postgres/index.ts';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { createRedisStore, keyPrefix } from '../../src/stores/redis/index.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { dropSchema } from '../integration/http-stores.ts';
import { createSchemaName, postgresSkipReason, sharedPostgres } from '../support/postgres-cluster.ts';
import { redisSkipReason } from '../support/redis-server.ts';
import { createRedisTestStore, stopRedisAfterAll } from '../support/redis-stores.ts';
import { killIfRunning, type KilnProcess } from './kiln-process.ts';

/** A migrated store for one test. */
export interface QrE2eStore {
  /** Flags that point a `kiln` command at the store. */
  args: string[];
  /** Environment the `kiln` commands need on top (the PostgreSQL schema). */
  env: Record<string, string>;
  /** The test's own connection, for checks. */
  store: Store;
  /** A new connection to the same store (the caller closes it), for in-process kilns sharing it. */
  connect(): Store;
  /**
   * Publications of `subjectId`, whatever their profile, read beside kiln: rows of the
   * publications table (SQL), fields of the subject's publication hash (Redis).
   */
  countPublications(subjectId: string): Promise<number>;
  /** Closes the connection and drops the PostgreSQL schema. */
  destroy(): Promise<void>;
}

/** One store kind. */
export interface QrE2eStoreCase {
  name: string;
  /** Why it is skipped here, or undefined when it runs. */
  skip: string | undefined;
  /** Creates and migrates a store (a SQLite file goes in `dir`). */
  open(dir: string): Promise<QrE2eStore>;
}

const COUNT_PUBLICATIONS = 'SELECT count(*) AS n FROM publications WHERE subject_id = ?';

async function openSqlite(dir: string): Promise<QrE2eStore> {
  const path = join(dir, 'kiln.db');
  const store = createSqliteStore({ path });
  // Migrated here, so the kiln processes started together never race to create the schema.
  await store.migrate();
  return {
    args: ['--db', path],
    env: {},
    store,
    connect: () => createSqliteStore({ path }),
    async countPublications(subjectId) {
      const db = new Database(path, { readonly: true, fileMustExist: true });
      try {
        return Number((db.prepare(COUNT_PUBLICATIONS).get(subjectId) as { n: number }).n);
      } finally {
        db.close();
      }
    },
    destroy: () => store.close(),
  };
}

async function openPostgres(): Promise<QrE2eStore> {
  const { url } = await sharedPostgres();
  const schema = createSchemaName('kiln_qr_e2e_');
  const store = createPostgresStore({ connectionString: url, schema });
  try {
    await store.migrate();
  } catch (err) {
    await store.close();
    await dropSchema(url, schema);
    throw err;
  }
  return {
    args: ['--store', url],
    env: { KILN_PG_SCHEMA: schema },
    store,
    connect: () => createPostgresStore({ connectionString: url, schema }),
    async countPublications(subjectId) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const sql = `SELECT count(*)::int AS n FROM ${pg.escapeIdentifier(schema)}.publications WHERE subject_id = $1`;
        const { rows } = await client.query<{ n: number }>(sql, [subjectId]);
        return rows[0]?.n ?? 0;
      } finally {
        await client.end();
      }
    },
    destroy: () => store.close().then(() => dropSchema(url, schema)),
  };
}

async function openRedis(): Promise<QrE2eStore> {
  const made = await createRedisTestStore();
  const { store } = made;
  try {
    await store.migrate();
  } catch (err) {
    await store.close();
    await made.destroy();
    throw err;
  }
  return {
    args: ['--store', made.storeUrl],
    env: {},
    store,
    connect: () => createRedisStore({ url: made.url, name: made.name }),
    // The hash `pub:<subjectId>` of the key layout (src/stores/redis/routines/lib-keys.lua).
    countPublications: (subjectId) => made.withConnection((redis) => redis.hlen(`${keyPrefix(made.name)}pub:${subjectId}`)),
    destroy: () => store.close().then(made.destroy),
  };
}

/**
 * SQLite, PostgreSQL and Redis (evaluated once per test file: the skip checks print their
 * reasons). Call it at the top level of a test file: it registers the stop of the file's Redis
 * server after its last test.
 */
export function qrE2eStoreCases(): { sqlite: QrE2eStoreCase; postgres: QrE2eStoreCase; redis: QrE2eStoreCase } {
  const cases = { sqlite: e2eStoreCase('sqlite'), postgres: e2eStoreCase('postgres'), redis: e2eStoreCase('redis') };
  if (cases.redis.skip === undefined) stopRedisAfterAll();
  return cases;
}

/**
 * One store kind, registering nothing (for harnesses outside node:test, such as `npm run chaos`,
 * which stop their Redis server themselves).
 */
export function e2eStoreCase(kind: 'sqlite' | 'postgres' | 'redis'): QrE2eStoreCase {
  if (kind === 'sqlite') return { name: 'SQLite', skip: undefined, open: openSqlite };
  if (kind === 'postgres') return { name: 'PostgreSQL', skip: postgresSkipReason(), open: openPostgres };
  return { name: 'Redis', skip: redisSkipReason(), open: openRedis };
}

/** A temp dir, an opened store and the processes a test starts, all removed after the test. */
export interface E2eScene {
  dir: string;
  store: QrE2eStore;
  /** Push every spawned process here: each is killed (if still running) and awaited after the test. */
  procs: KilnProcess[];
}

/** Opens a scene in a new temp dir named after `prefix`; cleanup is registered on `t`. */
export async function openE2eScene(t: { after(fn: () => Promise<void>): void }, storeCase: QrE2eStoreCase, prefix: string): Promise<E2eScene> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const procs: KilnProcess[] = [];
  const store = await storeCase.open(dir);
  t.after(async () => {
    procs.forEach(killIfRunning);
    await Promise.all(procs.map((p) => p.exited));
    await store.destroy();
    await rm(dir, { recursive: true, force: true });
  });
  return { dir, store, procs };
}
