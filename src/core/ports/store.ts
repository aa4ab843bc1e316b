/**
 * The store: the single source of truth for runs, stages, jobs, leases and the ledger, as a small
 * root plus named sub-ports (one file each under src/core/ports/). Each sub-port method is ONE
 * atomic unit (one transaction or script) and the engine never chains two calls expecting
 * atomicity. Time is the store's clock (`Store.now`). The conformance suite (test/conformance/)
 * defines this behaviour once, one suite file per sub-port.
 */
import type { ArtifactRefsPort } from './artifact-refs.ts';
import type { AuditPort } from './audit.ts';
import type { BlobsPort } from './blobs.ts';
import type { CachePort } from './cache.ts';
import type { JobsPort } from './jobs.ts';
import type { LocksPort } from './locks.ts';
import type { OperatorPort } from './operator.ts';
import type { PublicationsPort } from './publications.ts';
import type { ReadsPort } from './reads.ts';
import type { RequestsPort } from './requests.ts';
import type { RetentionPort } from './retention.ts';
import type { StatsPort } from './stats.ts';
import type { TokensPort } from './tokens.ts';
import type { VersionsPort } from './versions.ts';

/** What a store can and cannot do; differences are declared, never silently emulated. */
export interface StoreCapabilities {
  /** Name for logs and metrics, e.g. `sqlite`. */
  readonly name: string;
  /** Several processes may share the store. */
  readonly multiProcess: boolean;
  /** `onWake` delivers hints from other processes too (LISTEN/NOTIFY), not only this one. */
  readonly crossProcessWake: boolean;
}

/** Result of applying migrations. */
export interface MigrationResult {
  /** Versions applied by this call (empty when already up to date). */
  applied: number[];
  /** Schema version now in force. */
  version: number;
}

/** The store's schema version next to the newest this code knows (see {@link Store.schemaVersion}). */
export interface SchemaVersionInfo {
  /** Version recorded in the store; 0 when it was never migrated. */
  current: number;
  /** Newest version this code's migrations reach. */
  latest: number;
}

/** A store: memory (reference), sqlite or postgres. */
export interface Store {
  readonly capabilities: StoreCapabilities;

  /** Submit, claim, heartbeat, commit, hand back and reap jobs. */
  readonly jobs: JobsPort;
  /** Cancel, resume, replay; pause, resume and drain queues. */
  readonly operator: OperatorPort;
  /** Runs, jobs, queues and the ledger, read only. */
  readonly reads: ReadsPort;
  /** Single-flight cache entries. */
  readonly cache: CachePort;
  /** `(subject, profile) -> artifact` pointers. */
  readonly publications: PublicationsPort;
  /** Remembered client requests (`Idempotency-Key`). */
  readonly requests: RequestsPort;
  /** Race-free counters. */
  readonly versions: VersionsPort;
  /** Artifact references garbage collection must keep. */
  readonly artifactRefs: ArtifactRefsPort;
  /** Paged read-only scans for the invariant audit (`kiln verify`). */
  readonly audit: AuditPort;
  /** Named locks with fences (a stage's `lock` policy). */
  readonly locks: LocksPort;
  /** Operator aggregates: queue activity, dead letters by code. */
  readonly stats: StatsPort;
  /** API tokens (hashes of their secrets only). */
  readonly tokens: TokensPort;
  /** Deleting runs and request records past their retention period. */
  readonly retention: RetentionPort;
  /** Small content-addressed objects made durable by the store's commits (inline artifacts). */
  readonly blobs: BlobsPort;

  /** Applies pending migrations; safe when several processes call it at once. */
  migrate(): Promise<MigrationResult>;

  /**
   * Reads the schema version in force, changing nothing (no migration, no lock, works before
   * `migrate`): `current < latest` means migrations are pending, `current > latest` that newer
   * code migrated the store. For health checks (`kiln doctor`).
   */
  schemaVersion(): Promise<SchemaVersionInfo>;

  /** The store's clock, epoch ms. */
  now(): Promise<number>;

  /**
   * Registers a latency hint fired when jobs may have become ready on `queue`; returns an
   * unsubscribe function. Correctness never depends on it: workers also poll.
   */
  onWake(listener: (queue: string) => void): () => void;

  /** Releases connections and listeners; idempotent. Every later call fails with `STORE_UNAVAILABLE`. */
  close(): Promise<void>;
}
