/**
 * The `retention` sub-port: deleting runs that ended long enough ago, with everything that is
 * theirs, and remembered client requests past their age. The reaper calls `prune` in small
 * batches (src/engine/retention.ts); `kiln prune` calls both methods.
 */

/**
 * How long things are kept, in ms from when a run finished (its `finishedAt`) or a request record
 * was created; `null` keeps them forever. Run statuses map to the four kinds as in
 * {@link RETENTION_KIND_OF_STATUS}.
 */
export interface RetentionPolicy {
  /** Succeeded runs. */
  succeededMs: number | null;
  /** Failed and dead-lettered runs (a pruned dead-lettered run can no longer be replayed). */
  failedMs: number | null;
  /** Cancelled and superseded runs. */
  cancelledMs: number | null;
  /** Remembered client requests (`requests` sub-port), from their `createdAt`. */
  requestsMs: number | null;
}

/** Which retention period applies to a run of each status; other statuses are never pruned. */
export const RETENTION_KIND_OF_STATUS = {
  succeeded: 'succeededMs',
  failed: 'failedMs',
  dead_lettered: 'failedMs',
  cancelled: 'cancelledMs',
  superseded: 'cancelledMs',
} as const satisfies Record<string, keyof RetentionPolicy>;

/** The statuses a run may be pruned in (the terminal ones and dead-lettered), in a fixed order. */
export const PRUNABLE_RUN_STATUSES = Object.keys(RETENTION_KIND_OF_STATUS) as readonly (keyof typeof RETENTION_KIND_OF_STATUS)[];

/** What a prune deleted (or, for `count`, would delete), per kind. */
export interface PruneCounts {
  runs: number;
  /** Stage records of those runs. */
  stageRecords: number;
  /** Ledger entries of those runs. */
  ledgerEntries: number;
  /** Jobs still stored for those runs (dead jobs of dead-lettered or failed runs). */
  jobs: number;
  /**
   * Attempt history of those runs: their failed attempts. (What a store keeps to tell a holder of
   * a deleted job `cancelled` rather than `lost` — retired job ids — goes too, uncounted: after
   * the prune such a holder is told `lost`.)
   */
  attempts: number;
  /** Remembered client requests past `requestsMs`. */
  requests: number;
}

/** Deletes what retention no longer keeps; each method is one atomic unit. */
export interface RetentionPort {
  /**
   * Deletes at most `limit` expired runs (and at most `limit` expired request records), oldest
   * finished first, with their stage records, ledger entries, jobs, failed attempts and retired
   * job ids; returns the counts. A run is expired when its status is in
   * {@link PRUNABLE_RUN_STATUSES}, its period is not null and `finishedAt + period <= now`
   * (store clock). `limit` >= 1. Never deleted, however old: a run that still has a job that is not dead; a run
   * with a subject whose `subjectVersion` is the highest stored for its `(pipeline, subjectId)`
   * (the subject's current version: newer submissions of lower versions are superseded against
   * it). Publications, cache entries, version counters and locks are never touched: an artifact a
   * publication points at stays referenced (`artifactRefs.list`). Once a run is deleted its
   * submission idempotency key is free again: a new submission with it creates a new run.
   * A request record is expired when `createdAt + requestsMs <= now`.
   */
  prune(policy: RetentionPolicy, limit: number): Promise<PruneCounts>;

  /** What `prune` would delete if called until nothing is left (no limit); changes nothing. */
  count(policy: RetentionPolicy): Promise<PruneCounts>;
}

/** Counts of nothing, to add to. */
export function noPruneCounts(): PruneCounts {
  return { runs: 0, stageRecords: 0, ledgerEntries: 0, jobs: 0, attempts: 0, requests: 0 };
}
