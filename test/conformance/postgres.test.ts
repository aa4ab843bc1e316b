/**
 * Runs the store conformance suite on the PostgreSQL store: every test gets its own schema
 * on this process's private PostgreSQL (or `KILN_PG_URL`), dropped with CASCADE by `destroy`.
 * The suite's fake clock is passed in as the store's test clock, so lease expiry is a clock
 * advance, not a sleep. Skipped, with the reason printed, where no PostgreSQL is available
 * (never in CI).
 */
import { after, describe } from 'node:test';
import pg from 'pg';
import { createPostgresStore } from '../../src/stores/postgres/index.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { createSchemaName, postgresSkipReason, sharedPostgres } from '../support/postgres-cluster.ts';
import { describeStoreSuite } from './store-suite.ts';

const skip = postgresSkipReason();

/** Schema of each live store, so `destroy` can drop it. */
const schemas = new WeakMap<Store, string>();
let admin: pg.Pool | undefined;

async function adminPool(): Promise<pg.Pool> {
  if (admin) return admin;
  admin = new pg.Pool({ connectionString: (await sharedPostgres()).url, max: 1 });
  admin.on('error', () => {});
  return admin;
}

describe('postgres', { skip }, () => {
  after(async () => {
    await admin?.end();
    if (skip === undefined) await (await sharedPostgres()).stop();
  });

  describeStoreSuite('postgres', {
    create: async ({ clock, ids }) => {
      const schema = createSchemaName();
      const store = createPostgresStore({ connectionString: (await sharedPostgres()).url, schema, clock, ids, poolSize: 10 });
      schemas.set(store, schema);
      return store;
    },
    destroy: async (store) => {
      await store.close();
      const schema = schemas.get(store);
      if (schema !== undefined) await (await adminPool()).query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    },
  });
});
