/**
 * Runs the store conformance suite on PostgreSQL schemas that start at version 9: each test gets
 * its own schema, loaded from test/fixtures/postgres-schema-0009.sql.gz (the schema migrations
 * 0001-0009 built as they were released, with their schema_version rows), which the suite's first
 * `migrate()` upgrades (migration 0010, then every routine). So a store upgraded in place behaves
 * exactly as a fresh one. Otherwise as postgres.test.ts: the suite's fake clock is the store's
 * test clock, and each schema is dropped by `destroy`.
 *
 * The fixture was made once with migrations 0001-0009 as released (those of commit c15302e): a
 * schema they migrated, dumped with `pg_dump --inserts --no-owner --no-privileges --schema <schema>` and passed through
 * `fixtureDump` (test/support/postgres-schema.ts), which names the schema
 * `kiln_schema_placeholder`; `loadFixture0009` puts the target schema's name in its place.
 */
import { after, describe } from 'node:test';
import { postgresSkipReason } from '../support/postgres-cluster.ts';
import { loadFixture0009 } from '../support/postgres-schema.ts';
import { postgresStoreHarness } from '../support/postgres-stores.ts';
import { describeStoreSuite } from './store-suite.ts';

const skip = postgresSkipReason();

describe('postgres upgraded from version 9', { skip }, () => {
  const harness = postgresStoreHarness({ schemaPrefix: 'kiln_u', prepare: loadFixture0009 });
  after(async () => {
    if (skip === undefined) await harness.end();
  });

  describeStoreSuite('postgres upgraded from version 9', harness);
});
