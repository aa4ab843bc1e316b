/**
 * Runs the store conformance suite on PostgreSQL schemas that start at version 9: each test gets
 * its own schema, loaded from test/fixtures/postgres-schema-0009.sql.gz (the schema migrations
 * 0001-0009 built as they were released, with their schema_version rows), which the suite's first
 * `migrate()` upgrades (migration 0010, then every routine). So a store upgraded in place behaves
 * exactly as a fresh one. Otherwise as postgres.test.ts: the suite's fake clock is the store's
 * test clock, and each schema is dropped by `destroy`.
 *
 * The fixture was made once, from the released code (commit c15302e): a schema migrated by it,
 * dumped with `pg_dump --inserts --no-owner --no-privileges --schema <schema>` and passed through
 * `fixtureDump` (test/support/postgres-schema.ts), which names the schema
 * `kiln_schema_placeholder`; `loadFixture0009` puts the target schema's name in its place.
 */
import { after, describe } from 'node:test';
import pg from 'pg';
import { createPostgresStore } from '../../src/stores/postgres/index.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { createSchemaName, postgresSkipReason, sharedPostgres } from '../support/postgres-cluster.ts';
import { loadFixture0009 } from '../support/postgres-schema.ts';
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

describe('postgres upgraded from version 9', { skip }, () => {
  after(async () => {
    await admin?.end();
    if (skip === undefined) await (await sharedPostgres()).stop();
  });

  describeStoreSuite('postgres upgraded from version 9', {
    create: async ({ clock, ids }) => {
      const url = (await sharedPostgres()).url;
      const schema = createSchemaName('kiln_u');
      await loadFixture0009(url, schema);
      const store = createPostgresStore({ connectionString: url, schema, clock, ids, poolSize: 10 });
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
