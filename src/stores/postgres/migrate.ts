/**
 * Schema migrations and routines, applied in ONE transaction that first takes a
 * transaction-scoped advisory lock for the schema, so processes migrating at once queue on the
 * lock and each later one finds everything applied.
 * - Migrations: numbered `.sql` files in `./migrations/` (`NNNN_verb_noun.sql`), append-only:
 *   tables, types and indexes. Each is applied once, in order, and recorded in
 *   `<schema>.schema_version`.
 * - Routines: the `.sql` files of `./routines/`, one per area, each holding the current text of
 *   its SQL functions (`CREATE OR REPLACE FUNCTION`). After the migrations, every routine file
 *   whose sha256 differs from the one recorded in `<schema>.schema_routines` (migration 0010) is
 *   run again and its sha256 recorded, so a function is changed by editing its one definition.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type pg from 'pg';
import { SchemaVersionError } from '../../core/errors.ts';
import type { MigrationResult, SchemaVersionInfo } from '../../core/ports/store.ts';
import { createMigrationSource, type Migration } from '../shared/migration-files.ts';
import { inTransaction, nowFrom, type Queryable } from './database.ts';
import { quoteIdentifier } from './identifiers.ts';

const migrationFiles = createMigrationSource(new URL('./migrations/', import.meta.url));

/**
 * First key of the advisory lock (the second is the schema name's hash): a fixed number, so
 * kiln's lock never meets an application's single-key advisory locks.
 */
const MIGRATION_LOCK_CLASS = 0x6b696c6e; // 'kiln'

/** The migration files shipped with this code, in version order (read once, on first use). */
export function loadMigrations(): readonly Migration[] {
  return migrationFiles.load();
}

/** The highest schema version this code knows. */
export function latestSchemaVersion(): number {
  return migrationFiles.latestVersion();
}

/** Throws `SchemaVersionError` when the schema was migrated by newer code. */
export function assertKnownVersion(schema: string, version: number): void {
  const latest = latestSchemaVersion();
  if (version > latest) {
    throw new SchemaVersionError(`postgres schema ${schema} is at version ${version}, newer than this kiln supports (${latest})`, {
      details: { schema, version, supported: latest },
    });
  }
}

/** The version recorded in `schema`, 0 when the schema or its version table does not exist. */
export async function readSchemaVersion(db: Queryable, schema: string): Promise<number> {
  const table = `${quoteIdentifier(schema)}.schema_version`;
  const exists = await db.query<{ found: boolean }>('SELECT to_regclass($1) IS NOT NULL AS found', [table]);
  if (exists.rows[0]?.found !== true) return 0;
  const result = await db.query<{ version: number }>(`SELECT coalesce(max(version), 0)::bigint AS version FROM ${table}`);
  return result.rows[0]?.version ?? 0;
}

/** The schema's version next to the newest this code knows; changes nothing. */
export async function schemaVersionInfo(db: Queryable, schema: string): Promise<SchemaVersionInfo> {
  return { current: await readSchemaVersion(db, schema), latest: latestSchemaVersion() };
}

/** Applies the migrations newer than `current`, recording each; returns the versions applied. */
async function applyPending(client: pg.PoolClient, current: number, nowMs: number | null): Promise<number[]> {
  const applied: number[] = [];
  for (const migration of loadMigrations()) {
    if (migration.version <= current) continue;
    // A migration file holds several statements: sent as one simple query, no parameters.
    await client.query(migration.sql);
    await client.query(
      `INSERT INTO schema_version (version, name, applied_at) VALUES ($1, $2, ${nowFrom(3)})`,
      [migration.version, migration.name, nowMs],
    );
    applied.push(migration.version);
  }
  return applied;
}

/** One file of `./routines/`: the functions of one area. */
export interface Routine {
  /** The file name, as recorded in `schema_routines.name`. */
  name: string;
  /** The whole file: `CREATE OR REPLACE FUNCTION` statements, run as one script. */
  sql: string;
  /** sha256 (hex) of `sql`. */
  sha256: string;
}

const ROUTINES_FOLDER = new URL('./routines/', import.meta.url);
const ROUTINE_FILE_NAME = /^[a-z0-9-]+\.sql$/;

let routineFiles: readonly Routine[] | undefined;

/** The routine files shipped with this code, by name (read once, on first use). */
export function loadRoutines(): readonly Routine[] {
  routineFiles ??= readdirSync(ROUTINES_FOLDER)
    .filter((file) => file.endsWith('.sql'))
    .sort()
    .map((name): Routine => {
      if (!ROUTINE_FILE_NAME.test(name)) throw new SchemaVersionError(`routine file name ${name} does not match <area>.sql`);
      const sql = readFileSync(new URL(name, ROUTINES_FOLDER), 'utf8');
      return { name, sql, sha256: createHash('sha256').update(sql).digest('hex') };
    });
  return routineFiles;
}

/**
 * Runs every routine file whose sha256 is not the one recorded (a new file, or a changed one) and
 * records it. Runs after the migrations, so every table and type a function names exists, and
 * with the schema's search_path, which the functions capture.
 */
async function applyRoutines(client: pg.PoolClient, nowMs: number | null): Promise<void> {
  const recorded = await client.query<{ name: string; sha256: string }>('SELECT name, sha256 FROM schema_routines');
  const known = new Map(recorded.rows.map((row) => [row.name, row.sha256]));
  const changed = loadRoutines().filter((routine) => known.get(routine.name) !== routine.sha256);
  for (const routine of changed) {
    await client.query(routine.sql);
    await client.query(
      `INSERT INTO schema_routines (name, sha256, applied_at) VALUES ($1, $2, ${nowFrom(3)})
       ON CONFLICT (name) DO UPDATE SET sha256 = excluded.sha256, applied_at = excluded.applied_at`,
      [routine.name, routine.sha256, nowMs],
    );
  }
}

/**
 * Brings `schema` to the latest version and its routines to this code's, in one transaction:
 * either both are current or nothing changed. `nowMs` stamps `applied_at` (null: the database
 * clock).
 */
export async function applyMigrations(pool: pg.Pool, schema: string, nowMs: number | null): Promise<MigrationResult> {
  const quoted = quoteIdentifier(schema);
  return inTransaction(pool, async (client) => {
    // Before anything else, so concurrent migrators of one schema run one after another (even
    // CREATE SCHEMA IF NOT EXISTS races without it).
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [MIGRATION_LOCK_CLASS, schema]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoted}`);
    // Every object the migrations create lands in the schema; pg_temp last so no temporary
    // object can shadow a table inside the functions that capture this search_path.
    await client.query(`SET LOCAL search_path TO ${quoted}, pg_temp`);
    // Created here, not in 0001: the runner needs it to know what 0001 means.
    await client.query(`CREATE TABLE IF NOT EXISTS schema_version (
      version    integer PRIMARY KEY,
      name       text NOT NULL,
      applied_at bigint NOT NULL
    )`);
    const current = await readSchemaVersion(client, schema);
    assertKnownVersion(schema, current);
    const applied = await applyPending(client, current, nowMs);
    await applyRoutines(client, nowMs);
    return { applied, version: Math.max(current, ...applied) };
  });
}
