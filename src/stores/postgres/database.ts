/**
 * Running SQL: named statements (parsed and planned once per connection, then reused), the time
 * every statement is stamped with, and transactions that hand a broken connection back to the
 * pool to be discarded rather than reused.
 */
import type pg from 'pg';

/** A named SQL statement; `pg` prepares it once per connection under `name`. */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

/** Where a statement can run: the pool (autocommit, one statement = one transaction) or a held client. */
export type Queryable = pg.Pool | pg.PoolClient;

/** Names a statement; names are prefixed so they never collide with an application's own. */
export function statement(name: string, text: string): Statement {
  return { name: `kiln_${name}`, text };
}

/**
 * Statement builders as a `sql/<sub-port>.ts` module exports them: each takes the quoted schema
 * name (identifiers cannot be parameters, so the schema is part of the text).
 */
export type StatementBuilders = Record<string, (s: string) => unknown>;

/** What {@link buildAll} makes of a builder module: the same names, built for one schema. */
export type Built<T extends StatementBuilders> = { readonly [K in keyof T]: ReturnType<T[K]> };

/** Builds every export of a `sql/` module for the quoted schema `s`, once per store. */
export function buildAll<T extends StatementBuilders>(builders: T, s: string): Built<T> {
  return Object.fromEntries(Object.entries(builders).map(([name, build]) => [name, build(s)])) as Built<T>;
}

/** The database clock in epoch ms: the transaction's start (one instant for the whole transaction). */
export const DB_NOW_MS = 'floor(extract(epoch FROM now()) * 1000)::bigint';

/** Out: one row, `now`: the database clock in epoch ms (the same in every schema). */
export const DB_NOW: Statement = statement('db_now', `SELECT ${DB_NOW_MS} AS now`);

/**
 * SQL for "now" in a statement whose parameter `$n` carries the injected clock's time, or NULL
 * in production so the database's clock decides.
 */
export function nowFrom(n: number): string {
  return `coalesce($${n}::bigint, ${DB_NOW_MS})`;
}

/** Runs `st` with `values` and returns its rows. */
export async function queryRows<R extends pg.QueryResultRow>(db: Queryable, st: Statement, values: readonly unknown[]): Promise<R[]> {
  const result = await db.query<R>({ name: st.name, text: st.text, values: values as unknown[] });
  return result.rows;
}

/** Runs one ad-hoc (unnamed, unprepared) statement: operator queries whose text varies with filters. */
export async function queryAdHoc<R extends pg.QueryResultRow>(db: Queryable, text: string, values: readonly unknown[]): Promise<R[]> {
  const result = await db.query<R>(text, values as unknown[]);
  return result.rows;
}

/** A listing filter: the column, its operator, and the value (undefined: the filter is not given). */
export type ListingFilter = readonly [column: string, op: string, value: unknown];

/** The text of a listing: `where` holds the filters as `$1..$n`; `limitParam` (n + 1) is the limit's. */
export type ListingText = (where: string, limitParam: number) => string;

/**
 * Runs a listing (an operator query, ad hoc) with the filters given; the others are left out of the
 * text, so the planner sees only the conditions that apply and plans for their values.
 * Parameters are numbered from `$1`, the limit (a whole number, at least 0) last; `where` is
 * empty or `WHERE <conditions>`.
 */
export async function queryListing<R extends pg.QueryResultRow>(
  db: Queryable,
  text: ListingText,
  filters: readonly ListingFilter[],
  limit: number,
): Promise<R[]> {
  const present = filters.filter(([, , value]) => value !== undefined);
  const conditions = present.map(([column, op], i) => `${column} ${op} $${i + 1}`).join(' AND ');
  const values = present.map(([, , value]) => value);
  values.push(Math.max(0, Math.floor(limit)));
  return queryAdHoc<R>(db, text(conditions === '' ? '' : `WHERE ${conditions}`, values.length), values);
}

/**
 * Runs `body` in one transaction on a client of its own (READ COMMITTED: each statement sees
 * what committed before it started, and row locks decide the rest). Commits when `body`
 * resolves, rolls back when it throws. While the client is held it carries an 'error' listener:
 * a connection that breaks between two statements must not crash the process (`pg` emits the
 * error on the client, and pg-pool only listens while the client is idle).
 */
export async function inTransaction<T>(pool: pg.Pool, body: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (err: Error): void => {
    broken = err;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await body(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    broken ??= await rollback(client);
    throw err;
  } finally {
    client.removeListener('error', onError);
    // A client whose connection broke is destroyed, not returned to the pool.
    client.release(broken);
  }
}

/** Rolls back; returns the error when the connection itself is unusable. */
async function rollback(client: pg.PoolClient): Promise<Error | undefined> {
  try {
    await client.query('ROLLBACK');
    return undefined;
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}
