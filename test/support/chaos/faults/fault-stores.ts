/**
 * The stores the fault scenarios run on: a SQLite file in the scenario's directory, a schema of
 * its own on this process's PostgreSQL (test/support/postgres-cluster.ts), or a store name of its
 * own on a private redis-server (stopped afterwards). Each can be connected to several times
 * (in-process kilns sharing it) and handed to spawned `kiln` processes (`args`, `env`).
 */
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { Store } from '../../../../src/core/ports/store.ts';
import { createPostgresStore } from '../../../../src/stores/postgres/index.ts';
import { createRedisStore } from '../../../../src/stores/redis/index.ts';
import { createSqliteStore } from '../../../../src/stores/sqlite/index.ts';
import { dropSchema } from '../../../integration/http-stores.ts';
import { createSchemaName, sharedPostgres } from '../../postgres-cluster.ts';
import { createStoreName, startRedis } from '../../redis-server.ts';
import { deleteStoreKeys } from '../../redis-stores.ts';

/** The store kinds a scenario runs on. */
export type FaultStoreKind = 'sqlite' | 'postgres' | 'redis';

/** One scenario's store, migrated. */
export interface FaultStore {
  kind: FaultStoreKind;
  /** A new connection (the caller closes it). */
  connect(): Store;
  /** Flags that point a `kiln` command at the store. */
  args: string[];
  /** Environment a `kiln` command needs on top. */
  env: Record<string, string>;
  /** Drops what the scenario stored (and stops the Redis it started). */
  destroy(): Promise<void>;
}

async function openKind(kind: FaultStoreKind, dir: string): Promise<Omit<FaultStore, 'kind'>> {
  switch (kind) {
    case 'sqlite': {
      const path = join(dir, 'kiln.db');
      return { connect: () => createSqliteStore({ path }), args: ['--db', path], env: {}, destroy: async () => {} };
    }
    case 'postgres': {
      const { url } = await sharedPostgres();
      const schema = createSchemaName('kiln_fault_');
      return {
        connect: () => createPostgresStore({ connectionString: url, schema }),
        args: ['--store', url],
        env: { KILN_PG_SCHEMA: schema },
        destroy: () => dropSchema(url, schema),
      };
    }
    case 'redis': {
      const server = await startRedis();
      const name = createStoreName('fault');
      const storeUrl = new URL(server.url);
      storeUrl.searchParams.set('name', name);
      return {
        connect: () => createRedisStore({ url: server.url, name }),
        args: ['--store', storeUrl.href],
        env: {},
        async destroy() {
          // A KILN_REDIS_URL server outlives the scenario: its keys go; a private one stops.
          const admin = new Redis(server.url, { maxRetriesPerRequest: 2 });
          try {
            await deleteStoreKeys(admin, name);
          } finally {
            admin.disconnect();
            await server.stop();
          }
        },
      };
    }
  }
}

/** Opens and migrates the scenario's store (a SQLite file goes in `dir`). */
export async function openFaultStore(kind: FaultStoreKind, dir: string): Promise<FaultStore> {
  const opened = await openKind(kind, dir);
  const first = opened.connect();
  try {
    // Migrated here, so processes and kilns started together never race to create the schema.
    await first.migrate();
  } finally {
    await first.close();
  }
  return { kind, ...opened };
}
