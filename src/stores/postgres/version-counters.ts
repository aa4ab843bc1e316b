/**
 * Version counters: `allocateVersion` hands out 1, 2, 3, ... per `(scope, key)`, with one upsert
 * statement (see `queries/version-counters.ts`) that is race-free across processes and hosts.
 */
import type { PgContext } from './context.ts';
import { queryRows } from './database.ts';

/** Increments the counter `(scope, key)` and returns its new value (1 on first use). */
export async function allocateVersion(ctx: PgContext, scope: string, key: string): Promise<number> {
  const [row] = await queryRows<{ value: number }>(ctx.pool, ctx.sql.allocateVersion, [ctx.now(), scope, key]);
  if (!row) throw new Error(`version counter (${scope}, ${key}) returned no value`);
  return row.value;
}
