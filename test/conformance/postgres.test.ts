/**
 * Runs the backend conformance suite on the PostgreSQL backend: every test gets its own schema
 * on this process's private PostgreSQL (or `KILN_PG_URL`), dropped with CASCADE by `destroy`.
 * The suite's fake clock is passed in as the backend's test clock, so lease expiry is a clock
 * advance, not a sleep. Skipped, with the reason printed, where no PostgreSQL is available
 * (never in CI).
 */
import { after, describe } from 'node:test';
import pg from 'pg';
import { createPostgresBackend } from '../../src/backends/postgres/index.ts';
import type { Backend } from '../../src/core/ports.ts';
import { createSchemaName, postgresSkipReason, sharedPostgres } from '../support/postgres-cluster.ts';
import { describeBackend } from './backend-suite.ts';

const skip = postgresSkipReason();

/** Schema of each live backend, so `destroy` can drop it. */
const schemas = new WeakMap<Backend, string>();
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

  describeBackend('postgres', {
    create: async ({ clock, ids }) => {
      const schema = createSchemaName();
      const backend = createPostgresBackend({ connectionString: (await sharedPostgres()).url, schema, clock, ids, poolSize: 10 });
      schemas.set(backend, schema);
      return backend;
    },
    destroy: async (backend) => {
      await backend.close();
      const schema = schemas.get(backend);
      if (schema !== undefined) await (await adminPool()).query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    },
  });
});
