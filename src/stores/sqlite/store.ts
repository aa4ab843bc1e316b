/**
 * The SQLite Store: its sub-ports wired over one context (connection, statements, wakes). Every
 * method is one transaction on a shared file, BEGIN IMMEDIATE for anything that writes, so
 * read-modify-write is serialised across processes; driver errors never escape (see `errors.ts`).
 */
import type { Clock } from '../../core/clock.ts';
import type { IdGenerator } from '../../core/ids.ts';
import type { Store, StoreCapabilities } from '../../core/ports/store.ts';
import { createArtifactRefsPort } from './artifact-refs.ts';
import { createAuditPort } from './audit.ts';
import { createBlobsPort } from './blobs.ts';
import { createCachePort } from './cache.ts';
import type { SqliteDatabase } from './connection.ts';
import { createContext } from './context.ts';
import { createJobsPort } from './jobs.ts';
import { createLocksPort } from './locks.ts';
import { applyMigrations, readSchemaVersionInfo } from './migrate.ts';
import { createOperatorPort } from './operator.ts';
import { createPublicationsPort } from './publications.ts';
import { createReadsPort } from './reads.ts';
import { createRequestsPort } from './requests.ts';
import { createRetentionPort } from './retention.ts';
import { createStatsPort } from './stats.ts';
import { createTokensPort } from './tokens.ts';
import { createVersionsPort } from './versions.ts';

const CAPABILITIES: StoreCapabilities = Object.freeze({
  name: 'sqlite',
  multiProcess: true,
  // Wakes are in-process only; other processes find new work by polling.
  crossProcessWake: false,
});

/** What {@link buildSqliteStore} needs; defaults are applied by `index.ts`. */
export interface SqliteStoreDeps {
  db: SqliteDatabase;
  clock: Clock;
  ids: IdGenerator;
}

/** Builds the Store over an open connection; `close()` closes that connection. */
export function buildSqliteStore(deps: SqliteStoreDeps): Store {
  const ctx = createContext(deps.db, deps.clock, deps.ids);
  return {
    capabilities: CAPABILITIES,
    jobs: createJobsPort(ctx),
    operator: createOperatorPort(ctx),
    reads: createReadsPort(ctx),
    cache: createCachePort(ctx),
    publications: createPublicationsPort(ctx),
    requests: createRequestsPort(ctx),
    versions: createVersionsPort(ctx),
    artifactRefs: createArtifactRefsPort(ctx),
    audit: createAuditPort(ctx),
    locks: createLocksPort(ctx),
    stats: createStatsPort(ctx),
    tokens: createTokensPort(ctx),
    retention: createRetentionPort(ctx),
    blobs: createBlobsPort(ctx),
    // Migrations open their own transaction; the version read must work before any migration.
    migrate: ctx.outside(() => applyMigrations(ctx.db, ctx.clock.now())),
    schemaVersion: ctx.outside(() => readSchemaVersionInfo(ctx.db)),
    now: ctx.outside(() => ctx.clock.now()),
    onWake: (listener) => ctx.onWake(listener),
    close: async () => ctx.close(),
  };
}
