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
  /**
   * `body` outside any transaction: it opens its own, needs none, or is a read of ONE statement
   * (SQLite runs a lone statement as its own read transaction, one snapshot, so such a read skips
   * the BEGIN and COMMIT of {@link read}). Closed check and `mapError` only.
   */
  outside<Args extends unknown[], Result>(body: (...args: Args) => Result): Operation<Args, Result>;
  /** Refuses every later call and closes the connection; a second close does nothing. */
  close(): void;
}

/** A write waiting for its group's transaction. */
interface QueuedWrite {
  /** The body with its arguments. */
  run: () => unknown;
  /** The same as a savepoint inside the group's transaction (a better-sqlite3 transaction function nested in another). */
  runInSavepoint: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  /** Queues the body woke; fired only if its group commits. */
  wakes: Set<string>;
  outcome?: { ok: true; value: unknown } | { ok: false; error: unknown };
}

/** Creates the context of one connection. */
export function createContext(db: SqliteDatabase, clock: Clock, ids: IdGenerator): SqliteContext {
  let statements: Statements | undefined;
  let closed = false;
  // Queues woken by the body running now: its own set, so a body rolled back to its savepoint
  // drops its wakes without touching those of the other writes of its group.
  let currentWakes = new Set<string>();
  const listeners = createWakeListeners();

  /** The closed check and `mapError` every kind of operation shares. */
  const guarded = <Args extends unknown[], Result>(run: (...args: Args) => Promise<Result>): Operation<Args, Result> => {
    return async (...args) => {
      // After close, a kiln error rather than the driver's TypeError.
      if (closed) throw new StoreUnavailableError('sqlite store is closed');
      try {
        return await run(...args);
      } catch (err) {
        throw mapError(err);
      }
    };
  };

  // Group commit: the writes called in one turn of the event loop (every HTTP request read in
  // that turn, a worker's claim and commit batch) run as savepoints of ONE `BEGIN IMMEDIATE`
  // transaction, flushed by `setImmediate`. Each write still sees the ones before it and is
  // atomic on its own (a body that throws rolls back to its savepoint and only its caller sees
  // the error); each caller's promise settles only after the group's COMMIT, so a resolved write
  // is as durable as before. One COMMIT writes each shared page (queue heads, the newest runs) to
  // the WAL once instead of once per write: the commit was most of a write's cost.
  let queued: QueuedWrite[] = [];
  let flushScheduled = false;
  const runGroup = db.transaction((group: QueuedWrite[]) => {
    const only = group.length === 1 ? group[0] : undefined;
    if (only) {
      // Alone in its group, the body needs no savepoint: its error rolls back the transaction.
      currentWakes = only.wakes;
      only.outcome = { ok: true, value: only.run() };
      return;
    }
    for (const write of group) {
      currentWakes = write.wakes;
      try {
        write.outcome = { ok: true, value: write.runInSavepoint() };
      } catch (error) {
        write.outcome = { ok: false, error };
        // A failure that ended the transaction itself (SQLite rolled it all back, e.g. disk
        // full) takes the whole group with it: nothing of it committed.
        if (!db.inTransaction) throw error;
      }
    }
  });
  const settle = (group: QueuedWrite[]): void => {
    for (const write of group) {
      if (write.outcome?.ok) {
        listeners.fire(write.wakes);
        write.resolve(write.outcome.value);
      } else {
        write.reject(mapError(write.outcome?.error));
      }
    }
  };
  const flush = (): void => {
    flushScheduled = false;
    const group = queued;
    queued = [];
    if (group.length === 0) return;
    if (closed) {
      for (const write of group) write.reject(new StoreUnavailableError('sqlite store is closed'));
      return;
    }
    try {
      runGroup.immediate(group);
    } catch (err) {
      const error = mapError(err);
      for (const write of group) write.reject(error);
      return;
    } finally {
      currentWakes = new Set();
    }
    settle(group);
  };

  /** A write body as its group's savepoint (see the group commit above). */
  const write = <Args extends unknown[], Result>(body: (...args: Args) => Result): Operation<Args, Result> => {
    const savepoint = db.transaction(body);
    return guarded(
      (...args: Args) =>
        new Promise<Result>((resolve, reject) => {
          queued.push({ run: () => body(...args), runInSavepoint: () => savepoint(...args), resolve: resolve as (value: unknown) => void, reject, wakes: new Set() });
          if (flushScheduled) return;
          flushScheduled = true;
          setImmediate(flush);
        }),
    );
  };
  /** A read or an outside body: runs at once (a read never collects wakes). */
  const now = <Args extends unknown[], Result>(run: (...args: Args) => Result): Operation<Args, Result> => guarded(async (...args: Args) => run(...args));

  return {
    db,
    clock,
    ids,
    sql: () => (statements ??= prepareWhenCurrent(db)),
    wake(queue) {
      currentWakes.add(queue);
    },
    onWake: (listener) => listeners.subscribe(listener),
    write,
    read: (body) => now(db.transaction(body).deferred),
    outside: (body) => now(body),
    close() {
      if (closed) return;
      // Writes already called commit first: their callers were promised them.
      flush();
      closed = true;
      try {
        db.close();
      } catch (err) {
        throw mapError(err);
      }
    },
  };
}
