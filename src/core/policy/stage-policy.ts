/**
 * Per-stage policy: defaults in code, overridable per stage in the pipeline definition and then
 * in `kiln.yaml`. All durations are milliseconds.
 */
import { parseTemplate } from '../template.ts';

/** How a stage handler runs: on the worker's event loop, or in a worker-thread pool. */
export const Isolation = { inline: 'inline', thread: 'thread' } as const;
export type Isolation = (typeof Isolation)[keyof typeof Isolation];

/** Backoff between retries: full jitter, `random(0, min(capMs, baseMs * 2^(attempt-1)))`. */
export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
}

/**
 * A stage's named lock: before its handler runs, the worker takes the lock `key` (rendered from
 * the job, e.g. `render:{{input.assetId}}`), keeps it renewed with the job's heartbeat and
 * releases it after the commit. While another job holds the key, the job waits (handed back with
 * backoff, its attempt not counted) and never runs beside the holder.
 */
export interface LockPolicy {
  /**
   * Key template: text with references to the run's input (`{{input.<path>}}`), its fields
   * (`{{run.id}}`, `{{run.pipeline}}`, `{{run.subjectId}}`, `{{run.subjectVersion}}`,
   * `{{run.tenant}}`) or an earlier stage's output (`{{stage.<name>.outputs.<path>}}`).
   */
  key: string;
  /**
   * The lock expires this long after its last renewal (a crashed holder's lock is free after it);
   * must be above `heartbeatMs`. Absent: the worker's default (`worker.lock.ttl`, 30 s).
   */
  ttlMs?: number;
}

/** What a lock key template may refer to (see {@link LockPolicy.key}). */
export const LOCK_KEY_ROOTS: readonly string[] = ['input', 'run', 'stage'];

/** The default lock TTL when neither the stage nor `worker.lock.ttl` sets one. */
export const DEFAULT_LOCK_TTL_MS = 30_000;

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
  /**
   * Cap on retries of this stage's queue running at once (over every worker), so failing jobs
   * cannot take every slot: past it, claims take first attempts only (see
   * `ClaimRequest.maxRetriesRunning`). null: no cap.
   */
  maxRetriesRunning: number | null;
  isolation: Isolation;
  /** The stage's named lock, or null for none. */
  lock: LockPolicy | null;
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
  maxRetriesRunning: null,
  isolation: Isolation.inline,
  lock: null,
});

/**
 * A partial policy, as written in a definition or in `kiln.yaml`. `lock` fields layer one by one,
 * like `backoff` (kiln.yaml may set only the TTL of a lock a definition declares).
 */
export type StagePolicyOverrides = Partial<Omit<StagePolicy, 'backoff' | 'lock'>> & {
  backoff?: Partial<BackoffPolicy>;
  lock?: Partial<LockPolicy>;
};

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
  let lock: Partial<LockPolicy> | null = base.lock === null ? null : { ...base.lock };
  let heartbeatSet = false;
  for (const layer of layers) {
    if (!layer) continue;
    const { backoff, lock: lockLayer, ...rest } = layer;
    if (rest.heartbeatMs !== undefined) heartbeatSet = true;
    const defined = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
    out = { ...out, ...defined, backoff: { ...out.backoff, ...stripUndefined(backoff) } };
    if (lockLayer !== undefined) lock = { ...lock, ...stripUndefined(lockLayer) };
  }
  if (!heartbeatSet && out.leaseMs !== base.leaseMs) out.heartbeatMs = defaultHeartbeatMs(out.leaseMs);
  // A lock without a key is reported by checkStagePolicy, not dropped.
  out.lock = lock === null ? null : { key: lock.key ?? '', ...(lock.ttlMs === undefined ? {} : { ttlMs: lock.ttlMs }) };
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
  if (p.maxRetriesRunning !== null && (!Number.isInteger(p.maxRetriesRunning) || p.maxRetriesRunning < 0)) {
    problems.push(['maxRetriesRunning', `must be an integer >= 0, got ${p.maxRetriesRunning}`]);
  }
  positiveInt('timeoutMs', p.timeoutMs);
  positiveInt('leaseMs', p.leaseMs);
  positiveInt('heartbeatMs', p.heartbeatMs);
  if (!Number.isInteger(p.backoff.baseMs) || p.backoff.baseMs < 0) problems.push(['backoff.baseMs', 'must be >= 0']);
  if (p.backoff.capMs < p.backoff.baseMs) problems.push(['backoff.capMs', 'must be >= backoff.baseMs']);
  if (p.heartbeatMs >= p.leaseMs) problems.push(['heartbeatMs', `must be below leaseMs (${p.leaseMs})`]);
  if (!Number.isInteger(p.priority)) problems.push(['priority', 'must be an integer']);
  if (p.lock !== null) problems.push(...checkLockPolicy(p.lock, p.heartbeatMs));
  return problems;
}

/**
 * Problems with a lock policy as `[field, message]` pairs: a key template is required and must
 * parse (see `parseTemplate`, with {@link LOCK_KEY_ROOTS}), and a TTL must be a whole number of ms
 * above the heartbeat (a renewal must land before the lock expires).
 */
export function checkLockPolicy(lock: LockPolicy, heartbeatMs: number): [string, string][] {
  const problems: [string, string][] = [];
  const parsed = parseTemplate(lock.key, LOCK_KEY_ROOTS);
  if (lock.key.trim() === '') problems.push(['lock.key', 'is required: a lock needs a key (e.g. "render:{{input.assetId}}")']);
  else if (!parsed.ok) problems.push(['lock.key', parsed.problem]);
  if (lock.ttlMs !== undefined) {
    if (!Number.isInteger(lock.ttlMs) || lock.ttlMs < 1) problems.push(['lock.ttlMs', `must be a positive integer, got ${lock.ttlMs}`]);
    else if (lock.ttlMs <= heartbeatMs) problems.push(['lock.ttlMs', `must be above heartbeatMs (${heartbeatMs}): the heartbeat renews the lock`]);
  }
  return problems;
}
