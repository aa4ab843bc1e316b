/**
 * Per-stage policy: defaults in code, overridable per stage in the pipeline definition and then
 * in `kiln.yaml`. All durations are milliseconds.
 */

/** How a stage handler runs: on the worker's event loop, or in a worker-thread pool. */
export const Isolation = { inline: 'inline', thread: 'thread' } as const;
export type Isolation = (typeof Isolation)[keyof typeof Isolation];

/** Backoff between retries: full jitter, `random(0, min(capMs, baseMs * 2^(attempt-1)))`. */
export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
}

/** A stage's resolved policy. */
export interface StagePolicy {
  /** Attempts before dead-lettering (counting the first). */
  maxAttempts: number;
  backoff: BackoffPolicy;
  /** The handler is aborted (and abandoned if it ignores the signal) after this long. */
  timeoutMs: number;
  /** Lease granted per claim and per heartbeat. */
  leaseMs: number;
  /** How often a held lease is renewed; must be below `leaseMs`. */
  heartbeatMs: number;
  /** Jobs of this stage one worker runs at once. */
  concurrency: number;
  /**
   * Jobs a worker claims ahead and holds (leased, heartbeated) while its slots are busy, so the
   * next job starts without a round trip to the store. Raises throughput of short jobs; 0 keeps
   * every waiting job claimable by other workers.
   */
  prefetch: number;
  /** Lower runs first. */
  priority: number;
  /** Attempts ending in an intervention error before the run is parked. */
  interventionAttempts: number;
  isolation: Isolation;
}

/**
 * Defaults for every stage. The default lease (10 s) bounds redelivery after a crash; the
 * heartbeat is a quarter of it.
 */
export const DEFAULT_STAGE_POLICY: Readonly<StagePolicy> = Object.freeze({
  maxAttempts: 5,
  backoff: Object.freeze({ baseMs: 1_000, capMs: 60_000 }),
  timeoutMs: 60_000,
  leaseMs: 10_000,
  heartbeatMs: 2_500,
  concurrency: 4,
  prefetch: 0,
  priority: 0,
  interventionAttempts: 3,
  isolation: Isolation.inline,
});

/** A partial policy, as written in a definition or in `kiln.yaml`. */
export type StagePolicyOverrides = Partial<Omit<StagePolicy, 'backoff'>> & { backoff?: Partial<BackoffPolicy> };

/** The heartbeat used when no layer sets one: a quarter of the lease, so three renewals may fail before it expires. */
export function defaultHeartbeatMs(leaseMs: number): number {
  return Math.max(1, Math.floor(leaseMs / 4));
}

/**
 * Layers overrides onto a base policy (later wins). When no layer sets `heartbeatMs` but one
 * sets `leaseMs`, the heartbeat follows the lease ({@link defaultHeartbeatMs}).
 */
export function mergeStagePolicy(base: StagePolicy, ...layers: (StagePolicyOverrides | undefined)[]): StagePolicy {
  let out: StagePolicy = { ...base, backoff: { ...base.backoff } };
  let heartbeatSet = false;
  for (const layer of layers) {
    if (!layer) continue;
    const { backoff, ...rest } = layer;
    if (rest.heartbeatMs !== undefined) heartbeatSet = true;
    const defined = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
    out = { ...out, ...defined, backoff: { ...out.backoff, ...stripUndefined(backoff) } };
  }
  if (!heartbeatSet && out.leaseMs !== base.leaseMs) out.heartbeatMs = defaultHeartbeatMs(out.leaseMs);
  return out;
}

function stripUndefined<T extends object>(o: T | undefined): Partial<T> {
  if (!o) return {};
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Problems with a resolved policy, as `[field, message]` pairs (empty when valid). */
export function checkStagePolicy(p: StagePolicy): [string, string][] {
  const problems: [string, string][] = [];
  const positiveInt = (field: string, v: number): void => {
    if (!Number.isInteger(v) || v < 1) problems.push([field, `must be a positive integer, got ${v}`]);
  };
  positiveInt('maxAttempts', p.maxAttempts);
  positiveInt('concurrency', p.concurrency);
  if (!Number.isInteger(p.prefetch) || p.prefetch < 0) problems.push(['prefetch', `must be an integer >= 0, got ${p.prefetch}`]);
  positiveInt('interventionAttempts', p.interventionAttempts);
  positiveInt('timeoutMs', p.timeoutMs);
  positiveInt('leaseMs', p.leaseMs);
  positiveInt('heartbeatMs', p.heartbeatMs);
  if (!Number.isInteger(p.backoff.baseMs) || p.backoff.baseMs < 0) problems.push(['backoff.baseMs', 'must be >= 0']);
  if (p.backoff.capMs < p.backoff.baseMs) problems.push(['backoff.capMs', 'must be >= backoff.baseMs']);
  if (p.heartbeatMs >= p.leaseMs) problems.push(['heartbeatMs', `must be below leaseMs (${p.leaseMs})`]);
  if (!Number.isInteger(p.priority)) problems.push(['priority', 'must be an integer']);
  return problems;
}
