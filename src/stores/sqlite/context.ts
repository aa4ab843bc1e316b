/**
 * What every sub-port of the SQLite store shares: the connection, its prepared statements, the
 * clock and id source, the wake hints collected during a transaction, and the one wrapper every
 * port method goes through ({@link SqliteContext.write}, {@link SqliteContext.read},
 * {@link SqliteContext.outside}): refused once the store is closed, one transaction, errors
 * mapped by `mapError`. So an operation body is plain synchronous code over the statements.
 */
import type { Clock } from '../../core/clock.ts';
import { SchemaVersionError, StoreUnavailableError } from '../../core/errors.ts';
import type { IdGenerator } from '../../core/ids.ts';
import { createWakeListeners, type WakeListener } from '../shared/wake-listeners.ts';
import type { SqliteDatabase } from './connection.ts';
import { mapError } from './errors.ts';
import { assertKnownVersion, latestSchemaVersion, readSchemaVersion } from './migrate.ts';
import { prepareArtifactRefsStatements } from './sql/artifact-refs.ts';
import { prepareAuditStatements } from './sql/audit.ts';
import { prepareBlobsStatements } from './sql/blobs.ts';
import { prepareCacheStatements } from './sql/cache.ts';
import { prepareJobsStatements } from './sql/jobs.ts';
import { prepareLocksStatements } from './sql/locks.ts';
import { prepareOperatorStatements } from './sql/operator.ts';
import { preparePublicationsStatements } from './sql/publications.ts';
import { prepareReadsStatements } from './sql/reads.ts';
import { prepareRequestsStatements } from './sql/requests.ts';
import { prepareRetentionStatements } from './sql/retention.ts';
import { prepareStatsStatements } from './sql/stats.ts';
import { prepareTokensStatements } from './sql/tokens.ts';
import { prepareVersionsStatements } from './sql/versions.ts';

/**
 * Prepares every statement of the store, once per connection, so the hot path never re-parses
 * SQL. The text lives in `sql/<sub-port>.ts`, in TypeScript rather than `.sql` files so each
 * statement sits next to its name and types in one reviewable list; migrations stay in
 * `migrations/*.sql`. Statement names are unique across the files.
 */
function prepareStatements(db: SqliteDatabase) {
  return {
    ...prepareJobsStatements(db),
    ...prepareOperatorStatements(db),
    ...prepareReadsStatements(db),
    ...prepareCacheStatements(db),
    ...preparePublicationsStatements(db),
    ...prepareRequestsStatements(db),
    ...prepareVersionsStatements(db),
    ...prepareArtifactRefsStatements(db),
    ...prepareAuditStatements(db),
    ...prepareLocksStatements(db),
    ...prepareStatsStatements(db),
    ...prepareTokensStatements(db),
    ...prepareRetentionStatements(db),
    ...prepareBlobsStatements(db),
  };
}

/** The prepared statements of one connection: the typed catalogue the operations use. */
export type Statements = ReturnType<typeof prepareStatements>;

/**
 * Prepares the statements if the schema is current, else `SchemaVersionError`: statements
 * prepared on an older schema would fail with driver errors, or worse, succeed on old tables.
 */
function prepareWhenCurrent(db: SqliteDatabase): Statements {
  const version = readSchemaVersion(db);
  assertKnownVersion(version);
  if (version < latestSchemaVersion()) {
    throw new SchemaVersionError(`database schema version ${version} is older than ${latestSchemaVersion()}: call migrate() first`, {
      details: { version, required: latestSchemaVersion() },
    });
  }
  return prepareStatements(db);
}

/** A port method built from a synchronous body (see {@link SqliteContext.write}). */
export type Operation<Args extends unknown[], Result> = (...args: Args) => Promise<Result>;

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
  /**
   * `body` as one `BEGIN IMMEDIATE` transaction: it takes the database write lock before reading,
   * so every read-modify-write inside is serialised against all processes sharing the file.
   * Wakes fire only after the commit; any error rolls back and is mapped by `mapError`.
   */
  write<Args extends unknown[], Result>(body: (...args: Args) => Result): Operation<Args, Result>;
  /**
   * `body` as one read transaction (`BEGIN DEFERRED`, never upgraded): a consistent snapshot
   * across its statements without taking the write lock.
   */
  read<Args extends unknown[], Result>(body: (...args: Args) => Result): Operation<Args, Result>;
  /** `body` outside any transaction (it opens its own, or needs none): closed check and `mapError` only. */
  outside<Args extends unknown[], Result>(body: (...args: Args) => Result): Operation<Args, Result>;
  /** Refuses every later call and closes the connection; a second close does nothing. */
  close(): void;
}

/** Creates the context of one connection. */
export function createContext(db: SqliteDatabase, clock: Clock, ids: IdGenerator): SqliteContext {
  let statements: Statements | undefined;
  let closed = false;
  // Queues woken by the transaction in progress: fired after its commit, dropped on rollback.
  const pendingWakes = new Set<string>();
  const listeners = createWakeListeners();

  /** The one wrapper: closed check, `run` (a transaction or the body itself), wakes, `mapError`. */
  const operation = <Args extends unknown[], Result>(run: (...args: Args) => Result): Operation<Args, Result> => {
    return async (...args) => {
      // After close, a kiln error rather than the driver's TypeError.
      if (closed) throw new StoreUnavailableError('sqlite store is closed');
      try {
        const result = run(...args);
        listeners.fire(pendingWakes);
        pendingWakes.clear();
        return result;
      } catch (err) {
        pendingWakes.clear();
        throw mapError(err);
      }
    };
  };

  return {
    db,
    clock,
    ids,
    sql: () => (statements ??= prepareWhenCurrent(db)),
    wake(queue) {
      pendingWakes.add(queue);
    },
    onWake: (listener) => listeners.subscribe(listener),
    write: (body) => operation(db.transaction(body).immediate),
    // A deferred body only reads, so it never collects wakes: firing and clearing are no-ops.
    read: (body) => operation(db.transaction(body).deferred),
    outside: (body) => operation(body),
    close() {
      if (closed) return;
      closed = true;
      try {
        db.close();
      } catch (err) {
        throw mapError(err);
      }
    },
  };
}
