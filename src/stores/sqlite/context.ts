/**
 * What every operation of the SQLite store shares: the connection, its prepared statements,
 * the clock and id source, and the wake hints collected during a transaction. Operations are
 * built with {@link writeOperation} / {@link readOperation}, which own the transaction boundary
 * and the error mapping, so an operation body is plain synchronous code over the statements.
 */
import type { Clock } from '../../core/clock.ts';
import { SchemaVersionError } from '../../core/errors.ts';
import type { IdGenerator } from '../../core/ids.ts';
import { createWakeListeners, type WakeListener } from '../shared/wake-listeners.ts';
import type { SqliteDatabase } from './connection.ts';
import { mapError } from './errors.ts';
import { assertKnownVersion, latestSchemaVersion, readSchemaVersion } from './migrate.ts';
import { prepareStatements, type Statements } from './statements.ts';

/** Shared state of one store instance. */
export interface SqliteContext {
  readonly db: SqliteDatabase;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  /** The prepared statements; prepared on first use, once the schema is current. */
  sql(): Statements;
  /** Marks `queue` to be woken once the current transaction has committed. */
  wake(queue: string): void;
  /** Registers a wake listener; returns its unsubscribe function. */
  onWake(listener: WakeListener): () => void;
  /** Fires the collected wakes (after a commit). */
  flushWakes(): void;
  /** Forgets the collected wakes (after a rollback). */
  discardWakes(): void;
}

/** Creates the context of one connection. */
export function createContext(db: SqliteDatabase, clock: Clock, ids: IdGenerator): SqliteContext {
  let statements: Statements | undefined;
  // Queues woken by the transaction in progress: fired after its commit, dropped on rollback.
  const pendingWakes = new Set<string>();
  const listeners = createWakeListeners();
  const ctx: SqliteContext = {
    db,
    clock,
    ids,
    sql() {
      if (statements) return statements;
      const version = readSchemaVersion(db);
      assertKnownVersion(version);
      if (version < latestSchemaVersion()) {
        throw new SchemaVersionError(`database schema version ${version} is older than ${latestSchemaVersion()}: call migrate() first`, {
          details: { version, required: latestSchemaVersion() },
        });
      }
      statements = prepareStatements(db);
      return statements;
    },
    wake(queue) {
      pendingWakes.add(queue);
    },
    onWake: (listener) => listeners.subscribe(listener),
    flushWakes() {
      listeners.fire(pendingWakes);
      pendingWakes.clear();
    },
    discardWakes: () => pendingWakes.clear(),
  };
  return ctx;
}

/**
 * Wraps `body` as one `BEGIN IMMEDIATE` transaction: it takes the database write lock before
 * reading, so every read-modify-write inside is serialised against all processes sharing the
 * file. Wakes fire only after a commit; any error is mapped by `mapError` and rolls back.
 */
export function writeOperation<Args extends unknown[], Result>(
  ctx: SqliteContext,
  body: (...args: Args) => Result,
): (...args: Args) => Promise<Result> {
  return transactionOperation(ctx, body, 'immediate');
}

/**
 * Wraps `body` as one read transaction (`BEGIN DEFERRED`, never upgraded): a consistent
 * snapshot across its statements without taking the write lock.
 */
export function readOperation<Args extends unknown[], Result>(
  ctx: SqliteContext,
  body: (...args: Args) => Result,
): (...args: Args) => Promise<Result> {
  return transactionOperation(ctx, body, 'deferred');
}

function transactionOperation<Args extends unknown[], Result>(
  ctx: SqliteContext,
  body: (...args: Args) => Result,
  mode: 'immediate' | 'deferred',
): (...args: Args) => Promise<Result> {
  const tx = ctx.db.transaction(body);
  // A deferred body only reads, so it never collects wakes: flushing or discarding is a no-op.
  return async (...args) => {
    try {
      const result = tx[mode](...args);
      ctx.flushWakes();
      return result;
    } catch (err) {
      ctx.discardWakes();
      throw mapError(err);
    }
  };
}
