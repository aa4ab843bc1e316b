/**
 * What the simulation checks, in two parts.
 *
 * The protocol oracle ({@link LeaseModel}): the simulation sees every claim, renewal, commit,
 * release and reap, so it knows which lease of each job is current and until when. From that it
 * knows what the store must answer: a commit or heartbeat is accepted exactly when it carries
 * the job's current token before its lease ends (the fence); a claim never hands out a job whose
 * lease is still live, never from a paused queue, always with a larger fence; releases and reaps
 * hand back exactly the leases they should; a stage completes at most once.
 *
 * The state checks ({@link StateWatch}, {@link auditStore}): every check of `kiln verify` that
 * reads the store alone (leases, runs, ledger: the engine's own `verifyStore` over the `audit`
 * sub-port), plus what must never change: a run's terminal state, a ledger entry, a stage once
 * succeeded; and a refused call must leave the state exactly as it was.
 */
import type { Clock } from '../../../src/core/clock.ts';
import type { LedgerEntry, Run, StageRecord } from '../../../src/core/model.ts';
import type { ArtifactStore } from '../../../src/core/ports/artifact-store.ts';
import type { ClaimedJob, CommitItem, CommitResult, LeaseRef, LeaseStatus } from '../../../src/core/ports/jobs.ts';
import type { Store } from '../../../src/core/ports/store.ts';
import { isTerminal } from '../../../src/core/run/transitions.ts';
import { verifyStore } from '../../../src/engine/verify/verify-store.ts';
import { createAuditPort } from '../../../src/stores/memory/audit.ts';
import type { MemoryContext } from '../../../src/stores/memory/context.ts';
import { JobIndex } from '../../../src/stores/memory/job-index.ts';
import type { MemoryState } from '../../../src/stores/memory/state.ts';

/** The invariants, by the name a failure reports. */
export const Invariant = {
  /** A commit was accepted from a lease that was not the job's current one, or had expired. */
  FENCE_STALE_COMMIT_ACCEPTED: 'FENCE_STALE_COMMIT_ACCEPTED',
  /** A heartbeat renewed a lease that was not the job's current one, or had expired. */
  FENCE_STALE_RENEW_ACCEPTED: 'FENCE_STALE_RENEW_ACCEPTED',
  /** A claim's fence was not greater than every fence issued before. */
  FENCE_NOT_INCREASING: 'FENCE_NOT_INCREASING',
  /** A commit or heartbeat with the current, unexpired lease was refused. */
  VALID_LEASE_REFUSED: 'VALID_LEASE_REFUSED',
  /** A claim handed out a job whose lease was still live: two holders at once. */
  JOB_HELD_TWICE: 'JOB_HELD_TWICE',
  /** A claim took a job from a paused queue. */
  CLAIM_FROM_PAUSED_QUEUE: 'CLAIM_FROM_PAUSED_QUEUE',
  /** A claim's lease, attempt or redelivery flag is not what the claim rules say. */
  CLAIM_MISREPORTED: 'CLAIM_MISREPORTED',
  /** A release or reap handed back other leases than it should have. */
  HAND_BACK_MISCOUNTED: 'HAND_BACK_MISCOUNTED',
  /** A stage (or compensation) was committed as completed twice. */
  STAGE_COMPLETED_TWICE: 'STAGE_COMPLETED_TWICE',
  /** A succeeded stage record stopped being succeeded. */
  STAGE_SUCCESS_UNDONE: 'STAGE_SUCCESS_UNDONE',
  /** A ledger entry changed or disappeared. */
  LEDGER_ENTRY_CHANGED: 'LEDGER_ENTRY_CHANGED',
  /** A run that ended changed its status, error or end time. */
  TERMINAL_RUN_CHANGED: 'TERMINAL_RUN_CHANGED',
  /** A refused call (all commits refused, a rejected operator action) changed the state. */
  REFUSED_CALL_CHANGED_STATE: 'REFUSED_CALL_CHANGED_STATE',
  /** The memory state's job index disagrees with its jobs (claims, enqueues or backlogs would read stale entries). */
  JOB_INDEX_STALE: 'JOB_INDEX_STALE',
  /** A crashed worker's job still carries its lease after expiry and a reaper pass. */
  CRASHED_LEASE_NOT_REDELIVERED: 'CRASHED_LEASE_NOT_REDELIVERED',
  /** After the drain phase a run has not ended. */
  RUN_STUCK_AFTER_DRAIN: 'RUN_STUCK_AFTER_DRAIN',
  /** A store call threw what the protocol does not allow there. */
  UNEXPECTED_ERROR: 'UNEXPECTED_ERROR',
} as const;

/** A broken invariant; the schedule adds the seed and the step. `verify:<kind>` names a `kiln verify` violation. */
export class InvariantViolation extends Error {
  readonly invariant: string;
  constructor(invariant: string, message: string) {
    super(message);
    this.invariant = invariant;
  }
}

function violated(invariant: string, message: string): never {
  throw new InvariantViolation(invariant, message);
}

/** The lease of one job as the protocol made it. */
interface ModelLease {
  runId: string;
  token: string;
  leaseUntil: number;
  leaseMs: number;
}

/** The protocol oracle: see the module comment. */
export class LeaseModel {
  /** Job id -> its current lease, while one exists (claimed and not yet committed, released, reaped or ended with its run). */
  readonly leases = new Map<string, ModelLease>();
  private lastFence = 0;
  /** Idempotency keys committed as completed. */
  private readonly completed = new Set<string>();

  /** Why `lease` may not commit or renew now, or null when it may. */
  refusalReason(lease: LeaseRef, now: number): string | null {
    const current = this.leases.get(lease.jobId);
    if (!current) return `job ${lease.jobId} has no lease now (committed, released, reaped, or its run ended)`;
    if (current.token !== lease.token) return `token ${lease.token} of job ${lease.jobId} was superseded by a later claim (${current.token})`;
    if (current.leaseUntil <= now) return `the lease ${lease.token} of job ${lease.jobId} ended at ${current.leaseUntil}, now is ${now}`;
    return null;
  }

  /** Checks one claimed job and records its lease. */
  claimed(claimed: ClaimedJob, leaseMs: number, paused: boolean, now: number): void {
    const { job } = claimed;
    const previous = this.leases.get(job.id);
    if (previous && previous.leaseUntil > now) {
      violated(Invariant.JOB_HELD_TWICE, `job ${job.id} was claimed (token ${job.leaseToken}) while lease ${previous.token} was live until ${previous.leaseUntil} (now ${now})`);
    }
    if (paused) violated(Invariant.CLAIM_FROM_PAUSED_QUEUE, `job ${job.id} was claimed from paused queue ${job.queue}`);
    if ((job.fence ?? 0) <= this.lastFence) violated(Invariant.FENCE_NOT_INCREASING, `job ${job.id} was claimed with fence ${job.fence}, not above ${this.lastFence}`);
    this.lastFence = job.fence ?? 0;
    if (job.leaseToken === null || job.leaseUntil !== now + leaseMs || claimed.redelivered !== (previous !== undefined)) {
      violated(
        Invariant.CLAIM_MISREPORTED,
        `job ${job.id} claimed with token ${job.leaseToken}, leaseUntil ${job.leaseUntil} (expected ${now + leaseMs}), redelivered ${claimed.redelivered} ` +
          `(an expired lease was ${previous ? '' : 'not '}there)`,
      );
    }
    this.leases.set(job.id, { runId: job.runId, token: job.leaseToken, leaseUntil: job.leaseUntil, leaseMs });
  }

  /** Checks each commit result against the fence, in batch order, and forgets the leases it ended. */
  committed(items: readonly CommitItem[], results: readonly CommitResult[], idempotencyKeys: readonly string[], now: number): void {
    items.forEach((item, i) => {
      const result = results[i];
      const reason = this.refusalReason(item.lease, now);
      if (result?.outcome === 'committed') {
        if (reason !== null) violated(Invariant.FENCE_STALE_COMMIT_ACCEPTED, `a ${item.type} commit was accepted although ${reason}`);
        this.leases.delete(item.lease.jobId);
        const key = idempotencyKeys[i] ?? '';
        if (item.type === 'complete') {
          if (this.completed.has(key)) violated(Invariant.STAGE_COMPLETED_TWICE, `${key} was committed as completed a second time (job ${item.lease.jobId})`);
          this.completed.add(key);
        }
      } else if (reason === null) {
        violated(Invariant.VALID_LEASE_REFUSED, `a ${item.type} commit with the current lease ${item.lease.token} of job ${item.lease.jobId} was refused: ${result?.outcome}`);
      }
    });
  }

  /** Checks each heartbeat result against the fence and records the new lease ends. */
  renewed(leases: readonly LeaseRef[], results: readonly LeaseStatus[], now: number): void {
    leases.forEach((lease, i) => {
      const result = results[i];
      const reason = this.refusalReason(lease, now);
      if (result?.status === 'renewed') {
        if (reason !== null) violated(Invariant.FENCE_STALE_RENEW_ACCEPTED, `a heartbeat was accepted although ${reason}`);
        const current = this.leases.get(lease.jobId) as ModelLease;
        if (result.leaseUntil !== now + current.leaseMs) violated(Invariant.CLAIM_MISREPORTED, `job ${lease.jobId} renewed to ${result.leaseUntil}, expected ${now + current.leaseMs}`);
        current.leaseUntil = result.leaseUntil;
      } else if (reason === null) {
        violated(Invariant.VALID_LEASE_REFUSED, `a heartbeat with the current lease ${lease.token} of job ${lease.jobId} was refused: ${result?.status}`);
      }
    });
  }

  /** A release hands back exactly the leases that are still current (expired or not: nobody took them over). */
  released(leases: readonly LeaseRef[], count: number): void {
    const expected = leases.filter((lease) => this.leases.get(lease.jobId)?.token === lease.token);
    if (count !== expected.length) violated(Invariant.HAND_BACK_MISCOUNTED, `release of ${leases.length} lease(s) handed back ${count}, expected ${expected.length}`);
    for (const lease of expected) this.leases.delete(lease.jobId);
  }

  /** A reap hands back exactly the expired leases. */
  reaped(count: number, now: number): void {
    const expired = [...this.leases].filter(([, lease]) => lease.leaseUntil <= now);
    if (count !== expired.length) violated(Invariant.HAND_BACK_MISCOUNTED, `reap handed back ${count} job(s), expected the ${expired.length} expired lease(s): ${expired.map(([id]) => id).join(', ')}`);
    for (const [jobId] of expired) this.leases.delete(jobId);
  }

  /** Forgets the leases of runs that ended (cancelled, superseded, drained): their jobs are gone. */
  forgetEnded(state: MemoryState): void {
    for (const [jobId, lease] of this.leases) {
      const run = state.runs.get(lease.runId);
      if (run && isTerminal(run.status)) this.leases.delete(jobId);
    }
  }
}

/** Everything a call may change, as one string: equal before and after a refused call. */
export function stateDigest(state: MemoryState): string {
  return JSON.stringify([
    [...state.runs.values()],
    [...state.stages.values()],
    [...state.jobs.values()],
    [...state.ledger.values()],
    [...state.failedAttempts.values()],
    [...state.queuePaused],
    state.fence,
  ]);
}

/** Checks that a call the store refused left the state as it was (`before`: its digest before the call). */
export function assertUnchanged(state: MemoryState, before: string, what: string): void {
  if (stateDigest(state) !== before) violated(Invariant.REFUSED_CALL_CHANGED_STATE, `${what} was refused but the state changed`);
}

/** Checks the state's job index against one rebuilt from its jobs (in creation order, as they were filed). */
function checkJobIndex(state: MemoryState): void {
  const rebuilt = new JobIndex();
  for (const job of state.jobs.values()) rebuilt.add(job);
  const kept = JSON.stringify(state.jobIndex.snapshot());
  const expected = JSON.stringify(rebuilt.snapshot());
  if (kept !== expected) violated(Invariant.JOB_INDEX_STALE, `the job index holds ${kept}, the jobs say ${expected}`);
}

/** What must not change of an ended run. */
interface RunEnd {
  status: Run['status'];
  finishedAt: number | null;
  error: Run['error'];
  errorText: string;
}

function endOf(run: Run): RunEnd {
  return { status: run.status, finishedAt: run.finishedAt, error: run.error, errorText: JSON.stringify(run.error) };
}

function describeEnd(end: RunEnd): string {
  return `${end.status} at ${end.finishedAt} with ${end.errorText}`;
}

/** What must not change of a ledger entry. */
type LedgerSeen = Pick<LedgerEntry, 'runId' | 'stage' | 'kind' | 'completedAt' | 'output'>;

/**
 * What must never change once it happened: ended runs, ledger entries, succeeded stages. Records
 * are compared field by field (errors and outputs by identity: the state replaces them, never
 * edits them in place), not serialised, so the watch stays cheap enough to run after every step.
 */
export class StateWatch {
  private readonly ended = new Map<string, RunEnd>();
  private readonly ledger = new Map<string, LedgerSeen>();
  /** Stage records seen succeeded (the state keeps one record object per stage of a run). */
  private readonly succeeded = new Set<StageRecord>();

  check(state: MemoryState): void {
    checkJobIndex(state);
    for (const run of state.runs.values()) {
      const seen = this.ended.get(run.id);
      if (seen === undefined) {
        if (isTerminal(run.status)) this.ended.set(run.id, endOf(run));
      } else if (run.status !== seen.status || run.finishedAt !== seen.finishedAt || run.error !== seen.error) {
        violated(Invariant.TERMINAL_RUN_CHANGED, `run ${run.id} ended ${describeEnd(seen)} and is now ${describeEnd(endOf(run))}`);
      }
    }
    for (const [key, seen] of this.ledger) {
      const entry = state.ledger.get(key);
      if (entry?.runId !== seen.runId || entry.stage !== seen.stage || entry.kind !== seen.kind || entry.completedAt !== seen.completedAt || entry.output !== seen.output) {
        violated(Invariant.LEDGER_ENTRY_CHANGED, `ledger entry ${key} was ${JSON.stringify(seen)}, is now ${entry ? JSON.stringify(entry) : 'gone'}`);
      }
    }
    if (state.ledger.size > this.ledger.size) {
      for (const [key, entry] of state.ledger) if (!this.ledger.has(key)) this.ledger.set(key, { ...entry });
    }
    for (const records of state.stages.values()) {
      for (const record of records) {
        if (record.status === 'succeeded') this.succeeded.add(record);
        else if (this.succeeded.has(record)) violated(Invariant.STAGE_SUCCESS_UNDONE, `stage ${record.stage} of run ${record.runId} had succeeded and is now ${record.status}`);
      }
    }
  }
}

/** The artifact store of an audit that reads no artifact (only the store checks run): any use is a bug of the harness. */
const NO_ARTIFACTS = new Proxy({} as ArtifactStore, {
  get(_target, name) {
    throw new Error(`the simulation audits no artifact, yet ArtifactStore.${String(name)} was used`);
  },
});

/**
 * The store as `kiln verify` reads it in the simulation: the same store, whose `audit` sub-port
 * is the memory store's own (`createAuditPort`) over a context that does not copy results out.
 * The copy only protects a caller that mutates what it gets; the audit never does, and the copy
 * was most of an audit's cost, which runs after every step.
 */
export function auditedStore(store: Store, ctx: MemoryContext): Store {
  const uncopied: MemoryContext = { ...ctx, atomic: (body) => async (...args) => body(...args) };
  return { ...store, audit: createAuditPort(uncopied) };
}

/**
 * `kiln verify`'s checks that read the store alone (leases, runs, ledger), run by the engine's own
 * `verifyStore`; the first violation fails as `verify:<kind>`.
 */
export async function auditStore(store: Store, clock: Clock, leaseGraceMs: number): Promise<void> {
  const report = await verifyStore(
    { store, artifacts: NO_ARTIFACTS, clock },
    { leaseGraceMs, tempGraceMs: 0, checks: ['leases', 'runs', 'ledger'], maxViolations: 1 },
  );
  const [first] = report.violations;
  if (first) violated(`verify:${first.kind}`, `kiln verify (${first.check}): ${first.message}`);
  if (!report.complete) violated(Invariant.UNEXPECTED_ERROR, 'kiln verify did not read the store to the end');
}
