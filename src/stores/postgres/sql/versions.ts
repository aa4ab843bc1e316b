/**
 * Statements of the `versions` sub-port: race-free counters (`version_counters`).
 */
import { nowFrom, statement, type Statement } from '../database.ts';

/**
 * In: now, scope, key. Out: one row: the counter's new value, 1 when `(scope, key)` is new, else
 * the stored value + 1. One statement: of concurrent inserters one inserts and the others update
 * (ON CONFLICT waits for its commit); updates queue on the row lock and each adds 1 to the latest
 * committed value, so no value is handed out twice.
 */
export const allocateVersion = (s: string): Statement =>
  statement(
    'allocate_version',
    `INSERT INTO ${s}.version_counters AS c (scope, key, value, updated_at) VALUES ($2, $3, 1, ${nowFrom(1)})
     ON CONFLICT (scope, key) DO UPDATE SET value = c.value + 1, updated_at = excluded.updated_at
     RETURNING value`,
  );
