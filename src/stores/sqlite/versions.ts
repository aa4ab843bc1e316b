/**
 * The `versions` sub-port of the SQLite store: `allocate` hands out 1, 2, 3, ... per
 * `(scope, key)` with one upsert (`ALLOCATE_VERSION`) inside a BEGIN IMMEDIATE transaction, which
 * holds the database write lock from before the read of the stored value until after its write:
 * no value is handed out twice, however many processes share the file.
 */
import type { VersionsPort } from '../../core/ports/versions.ts';
import type { SqliteContext } from './context.ts';

/** Increments the counter `(scope, key)` and returns its new value (1 on first use). */
function allocateVersion(ctx: SqliteContext, scope: string, key: string): number {
  const row = ctx.sql().allocateVersion.get({ scope, key, now: ctx.clock.now() });
  if (!row) throw new Error(`version counter (${scope}, ${key}) returned no value`);
  return row.value;
}

/** Race-free counters over `ctx`. */
export function createVersionsPort(ctx: SqliteContext): VersionsPort {
  return { allocate: ctx.write((scope, key) => allocateVersion(ctx, scope, key)) };
}
