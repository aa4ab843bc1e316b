/**
 * Runs the store conformance suite on the PostgreSQL store: every test gets its own schema
 * on this process's private PostgreSQL (or `KILN_PG_URL`), dropped with CASCADE by `destroy`.
 * The suite's fake clock is passed in as the store's test clock, so lease expiry is a clock
 * advance, not a sleep. Skipped, with the reason printed, where no PostgreSQL is available
 * (never in CI).
 */
import { after, describe } from 'node:test';
import { postgresSkipReason } from '../support/postgres-cluster.ts';
import { postgresStoreHarness } from '../support/postgres-stores.ts';
import { describeStoreSuite } from './store-suite.ts';

const skip = postgresSkipReason();

describe('postgres', { skip }, () => {
  const harness = postgresStoreHarness();
  after(async () => {
    if (skip === undefined) await harness.end();
  });

  describeStoreSuite('postgres', harness);
});
