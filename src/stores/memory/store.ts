/**
 * The reference Store: everything in process memory, for fast deterministic tests and as the
 * executable reading of the ports' TSDoc. Its sub-ports are wired over one context, whose
 * `atomic` runs each method as one synchronous operation on the state and returns copies, never
 * live records.
 */
import type { Clock } from '../../core/clock.ts';
import type { IdGenerator } from '../../core/ids.ts';
import type { Store, StoreCapabilities } from '../../core/ports/store.ts';
import { createArtifactRefsPort } from './artifact-refs.ts';
import { createAuditPort } from './audit.ts';
import { createBlobsPort } from './blobs.ts';
import { createCachePort } from './cache.ts';
import { createContext, type MemoryContext } from './context.ts';
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
  name: 'memory',
  multiProcess: false,
  crossProcessWake: false,
});

/** Dependencies of the memory store; both are required here, defaults live in `index.ts`. */
export interface MemoryStoreDeps {
  clock: Clock;
  ids: IdGenerator;
}

/** Creates a memory store over a fresh, empty state. */
export function buildMemoryStore(deps: MemoryStoreDeps): Store {
  return buildMemoryStoreOn(createContext(deps.clock, deps.ids));
}

/**
 * The store over a context the caller made: tests that must break an invariant on purpose (which
 * no port method can) hold the context and change its state directly.
 */
export function buildMemoryStoreOn(ctx: MemoryContext): Store {
  const { state } = ctx;
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
    migrate: ctx.atomic(() => applyMigrations(state)),
    schemaVersion: ctx.atomic(() => readSchemaVersionInfo(state)),
    now: ctx.atomic(() => state.clock.now()),
    onWake: (listener) => state.wakeListeners.subscribe(listener),
    close: async () => ctx.close(),
  };
}
