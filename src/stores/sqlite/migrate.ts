/**
 * Schema migrations: numbered `.sql` files in `./migrations/` (`NNNN_verb_noun.sql`), append-only,
 * applied in order inside one `BEGIN IMMEDIATE` transaction (the SQLite write lock), each
 * recorded in `schema_version`. Two processes migrating at once serialise on the write lock; the
 * second sees the recorded versions and applies nothing.
 */
import { SchemaVersionError } from '../../core/errors.ts';
import type { MigrationResult, SchemaVersionInfo } from '../../core/ports/store.ts';
import { createMigrationSource, type Migration } from '../shared/migration-files.ts';
import type { SqliteDatabase } from './connection.ts';

const migrationFiles = createMigrationSource(new URL('./migrations/', import.meta.url));

/** The migration files shipped with this code, in version order (read once, on first use). */
export function loadMigrations(): readonly Migration[] {
  return migrationFiles.load();
}

/** The highest schema version this code knows. */
export function latestSchemaVersion(): number {
  return migrationFiles.latestVersion();
}

/** The schema version recorded in the database, 0 for a new file. */
export function readSchemaVersion(db: SqliteDatabase): number {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'").get();
  if (table === undefined) return 0;
  const row = db.prepare('SELECT MAX(version) AS version FROM schema_version').get() as { version: number | null };
  return row.version ?? 0;
}

/**
 * The recorded version next to the newest this code knows. A plain read outside any transaction:
 * it must work on a store that was never migrated.
 */
export function readSchemaVersionInfo(db: SqliteDatabase): SchemaVersionInfo {
  return { current: readSchemaVersion(db), latest: latestSchemaVersion() };
}

/** Throws `SchemaVersionError` when the database was migrated by newer code. */
export function assertKnownVersion(version: number): void {
  const latest = latestSchemaVersion();
  if (version > latest) {
    throw new SchemaVersionError(`database schema version ${version} is newer than this kiln supports (${latest})`, {
      details: { version, supported: latest },
    });
  }
}

/**
 * Applies every migration newer than the recorded version, all in one `BEGIN IMMEDIATE`
 * transaction: either the database ends at the latest version or nothing changed.
 */
export function applyMigrations(db: SqliteDatabase, nowMs: number): MigrationResult {
  const migrations = loadMigrations();
  const run = db.transaction((): MigrationResult => {
    // Created here, not in 0001: the runner needs it to know what 0001 means.
    db.exec(`CREATE TABLE IF NOT EXISTS schema_version (
      version    INTEGER PRIMARY KEY,
      name       TEXT NOT NULL,
      applied_at INTEGER NOT NULL
    )`);
    const current = readSchemaVersion(db);
    assertKnownVersion(current);
    const record = db.prepare('INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)');
    const applied: number[] = [];
    for (const migration of migrations) {
      if (migration.version <= current) continue;
      db.exec(migration.sql);
      record.run(migration.version, migration.name, nowMs);
      applied.push(migration.version);
    }
    return { applied, version: Math.max(current, ...applied) };
  });
  return run.immediate();
}
