/**
 * The PostgreSQL store's schema, pinned: a freshly migrated schema dumps exactly as the committed
 * snapshot `src/stores/postgres/schema.sql` (regenerate it with `npm run schema:postgres`), a
 * schema at version 9 (test/fixtures/postgres-schema-0009.sql.gz) ends the same once migrated,
 * routine files are applied again exactly when their text changed, and every SQL function is
 * created in one place: one file of `routines/`, never a migration.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { createFakeClock } from '../../src/core/clock.ts';
import { latestSchemaVersion, loadRoutines } from '../../src/stores/postgres/migrate.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { postgresSkipReason } from '../support/postgres-cluster.ts';
import { dumpSchemaSnapshot, loadFixture0009, pgDumpSkipReason, SCHEMA_SNAPSHOT_FILE } from '../support/postgres-schema.ts';
import { usePostgresStores } from '../support/postgres-stores.ts';

const skip = postgresSkipReason() ?? pgDumpSkipReason();
const STORE_DIR = fileURLToPath(new URL('../../src/stores/postgres/', import.meta.url));

/** `diff -u` of the committed snapshot and `actual`, for a failure message a reader can act on. */
function snapshotDiff(actual: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'kiln-schema-'));
  try {
    const actualFile = join(dir, 'schema.actual.sql');
    writeFileSync(actualFile, actual);
    const diff = spawnSync('diff', ['-u', SCHEMA_SNAPSHOT_FILE, actualFile], { encoding: 'utf8' });
    return diff.stdout || diff.error?.message || '(no diff output)';
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Fails, showing the diff, unless `actual` is the committed snapshot. */
function assertSnapshot(actual: string, what: string): void {
  if (actual === readFileSync(SCHEMA_SNAPSHOT_FILE, 'utf8')) return;
  assert.fail(`${what} differs from src/stores/postgres/schema.sql (npm run schema:postgres rewrites it):\n${snapshotDiff(actual)}`);
}

/** `CREATE [OR REPLACE] FUNCTION <name>` in the SQL files of one folder of the store: function name -> files. */
function functionsCreatedIn(folder: string, into: Map<string, string[]>): void {
  for (const file of readdirSync(join(STORE_DIR, folder)).filter((f) => f.endsWith('.sql'))) {
    const sql = readFileSync(join(STORE_DIR, folder, file), 'utf8');
    for (const match of sql.matchAll(/^\s*CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+([a-z_][a-z0-9_.]*)/gim)) {
      const name = (match[1] as string).toLowerCase();
      into.set(name, [...(into.get(name) ?? []), `${folder}/${file}`]);
    }
  }
}

describe('postgres schema', { skip }, () => {
  const stores = usePostgresStores();
  /** A store on `schema` with a test clock (so `applied_at` values are known). */
  const open = (schema: string, clock = createFakeClock()): Promise<Store> => stores.open({ schema, clock });

  it('a freshly migrated schema dumps as the committed schema.sql', async () => {
    const schema = stores.newSchema();
    await (await open(schema)).migrate();
    assertSnapshot(await dumpSchemaSnapshot(await stores.url(), schema), 'a freshly migrated schema');
  });

  it('a schema at version 9 is migrated to the same schema as a fresh one (0010 and every later migration, then every routine)', async () => {
    const schema = stores.newSchema();
    await loadFixture0009(await stores.url(), schema);
    const store = await open(schema);
    assert.deepEqual(await store.schemaVersion(), { current: 9, latest: latestSchemaVersion() });
    const result = await store.migrate();
    assert.deepEqual(result.applied, Array.from({ length: latestSchemaVersion() - 9 }, (_, i) => 10 + i));
    assertSnapshot(await dumpSchemaSnapshot(await stores.url(), schema), 'a schema upgraded from version 9');
    const recorded = await (await stores.admin()).query<{ name: string; sha256: string }>(`SELECT name, sha256 FROM "${schema}".schema_routines ORDER BY name`);
    assert.deepEqual(
      recorded.rows,
      loadRoutines().map(({ name, sha256 }) => ({ name, sha256 })),
    );
  });

  it('migrate applies a routine file again when its recorded sha256 differs, and leaves the others alone', async () => {
    const schema = stores.newSchema();
    const clock = createFakeClock();
    await (await open(schema, clock)).migrate();
    const pool = await stores.admin();
    // A stale recorded hash and a body that is not this code's, as older code would leave them.
    await pool.query(`UPDATE "${schema}".schema_routines SET sha256 = 'stale' WHERE name = 'jobs-leases.sql'`);
    await pool.query(`CREATE OR REPLACE FUNCTION "${schema}".lease_refusal(p_job_id text) RETURNS text LANGUAGE sql AS $$ SELECT 'lost' $$`);
    await clock.advance(60_000);
    const again = await (await open(schema, clock)).migrate();
    assert.deepEqual(again.applied, []);
    const rows = await pool.query<{ name: string; applied_at: number }>(`SELECT name, applied_at::float8 AS applied_at FROM "${schema}".schema_routines`);
    for (const row of rows.rows) {
      assert.equal(row.applied_at, row.name === 'jobs-leases.sql' ? clock.now() : clock.now() - 60_000, row.name);
    }
    assertSnapshot(await dumpSchemaSnapshot(await stores.url(), schema), 'a schema whose routine was re-applied');
  });

  it('every SQL function is created once, by one file of routines/, and by no migration', () => {
    const created = new Map<string, string[]>();
    functionsCreatedIn('migrations', created);
    functionsCreatedIn('routines', created);
    assert.ok(created.size > 0, 'no CREATE FUNCTION found at all');
    for (const [name, files] of created) {
      assert.equal(files.length, 1, `${name} is created in ${files.join(', ')}`);
      assert.match(files[0] as string, /^routines\//, `${name} is created by a migration (${files.join(', ')})`);
    }
  });
});
