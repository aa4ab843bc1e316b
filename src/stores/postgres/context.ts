/**
 * What every operation of the PostgreSQL store shares: the pool, the schema's statements and
 * wake channel, the id source, the time parameter, and local wake delivery.
 */
import type pg from 'pg';
import type { Clock } from '../../core/clock.ts';
import type { IdGenerator } from '../../core/ids.ts';
import type { Statements } from './statements.ts';

/** Shared state of one store instance. */
export interface PgContext {
  readonly pool: pg.Pool;
  /** The validated schema name. */
  readonly schema: string;
  /** The schema's LISTEN/NOTIFY channel. */
  readonly channel: string;
  readonly sql: Statements;
  readonly ids: IdGenerator;
  /**
   * The "now" parameter of every statement: the injected clock's time (tests), or null so that
   * the statement uses the database clock (production).
   */
  now(): number | null;
  /** Wakes this process's listeners for queues that got ready jobs; call after the commit. */
  wake(queues: Iterable<string>): void;
}

/** Builds the context; `clock` is the test seam (see `index.ts`), undefined in production. */
export function createContext(deps: {
  pool: pg.Pool;
  schema: string;
  channel: string;
  sql: Statements;
  ids: IdGenerator;
  clock: Clock | undefined;
  deliverWakes: (queues: Iterable<string>) => void;
}): PgContext {
  const { clock } = deps;
  return {
    pool: deps.pool,
    schema: deps.schema,
    channel: deps.channel,
    sql: deps.sql,
    ids: deps.ids,
    now: clock === undefined ? () => null : () => clock.now(),
    wake: deps.deliverWakes,
  };
}
