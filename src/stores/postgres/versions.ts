/**
 * The `versions` sub-port of the PostgreSQL store: counters that hand out 1, 2, 3, ... per
 * `(scope, key)` with one upsert statement (see sql/versions.ts), race-free across processes and
 * hosts.
 */
import type { VersionsPort } from '../../core/ports/versions.ts';
import type { PgContext } from './context.ts';
import { queryRows } from './database.ts';

/** Increments the counter `(scope, key)` and returns its new value (1 on first use). */
async function allocateVersion(ctx: PgContext, scope: string, key: string): Promise<number> {
  const [row] = await queryRows<{ value: number }>(ctx.pool, ctx.sql.versions.allocateVersion, [ctx.now(), scope, key]);
  if (!row) throw new Error(`version counter (${scope}, ${key}) returned no value`);
  return row.value;
}

/** Race-free counters over the context's pool. */
export function createVersionsPort(ctx: PgContext): VersionsPort {
  return ctx.port<VersionsPort>({
    allocate: (scope, key) => allocateVersion(ctx, scope, key),
  });
}
