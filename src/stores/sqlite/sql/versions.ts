/**
 * The SQL of the `versions` sub-port: version counters (`version_counters`, migration 0004).
 */
import type { SqliteDatabase } from '../connection.ts';

/**
 * In: scope, key, now. Out: the counter's new value: 1 when `(scope, key)` is new, else the
 * stored value + 1. Runs inside the caller's BEGIN IMMEDIATE transaction, so two processes
 * never read the same stored value (and so never hand out the same version).
 */
export const ALLOCATE_VERSION = `
  INSERT INTO version_counters (scope, key, value, updated_at) VALUES (@scope, @key, 1, @now)
  ON CONFLICT (scope, key) DO UPDATE SET value = value + 1, updated_at = excluded.updated_at
  RETURNING value`;

/** Prepares the statements of version counters; the schema must be migrated first. */
export function prepareVersionsStatements(db: SqliteDatabase) {
  return {
    allocateVersion: db.prepare<{ scope: string; key: string; now: number }, { value: number }>(ALLOCATE_VERSION),
  };
}
