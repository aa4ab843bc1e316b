/**
 * The checks that read the store alone: no lease left expired, every run held by exactly the
 * jobs its status calls for, and a ledger entry exactly for each succeeded stage. Each page the
 * store returns is one snapshot, so a run and its jobs (or its stages and ledger) are read
 * together and never disagree by a race.
 */
import { JobKind, JobState, RunStatus, TERMINAL_RUN_STATUSES } from '../../core/model.ts';
import type { AuditJob, LedgerMismatch, RunJobs } from '../../core/ports/audit.ts';
import { LedgerProblem } from '../../core/ports/audit.ts';
import { describeDuration, scanPages, type CheckContext } from './check-context.ts';
import { ViolationKind, type Violation } from './verify-types.ts';

/** No job is still leased longer than the lease grace after its lease ended. */
export function checkLeases(ctx: CheckContext): Promise<boolean> {
  return scanPages(
    ctx,
    (page) => ctx.store.audit.expiredLeases({ ...page, graceMs: ctx.leaseGraceMs }),
    (leases) => {
      for (const lease of leases) {
        ctx.report({
          kind: ViolationKind.LEASE_EXPIRED_UNREAPED,
          message:
            `job ${lease.jobId} of run ${lease.runId} (queue ${lease.queue}) is still leased by ${lease.leaseOwner ?? 'nobody'} ` +
            `${describeDuration(lease.overdueMs)} after its lease ended; nothing reaped it`,
          ids: { jobId: lease.jobId, runId: lease.runId, stage: lease.stage },
          details: { queue: lease.queue, kind: lease.kind, leaseOwner: lease.leaseOwner, leaseUntil: new Date(lease.leaseUntil).toISOString(), overdueMs: lease.overdueMs },
        });
      }
    },
  );
}

type RunFinding = Omit<Violation, 'check'>;

/** A finding about `run` and some of its jobs. */
function runFinding(kind: ViolationKind, run: RunJobs, jobs: readonly AuditJob[], message: string): RunFinding {
  const ids = jobs.length === 1 ? { runId: run.runId, jobId: jobs[0]?.id ?? '' } : { runId: run.runId, jobIds: jobs.map((j) => j.id) };
  const states = jobs.map((j) => `${j.id}:${j.kind}:${j.state}`).join(' ');
  return { kind, message, ids, details: { runStatus: run.status, pipeline: run.pipeline, currentStage: run.currentStage, jobs: states } };
}

/**
 * What is wrong with a run and its jobs, if anything. A run not ended moves only through its one
 * live job: `queued`/`running` need a ready or leased one, `parked` a parked one; a
 * `dead_lettered` run keeps its dead job (replayable) or runs one compensation. An ended run has
 * no live job.
 */
export function runProblem(run: RunJobs): RunFinding | null {
  const live = run.jobs.filter((job) => job.state !== JobState.dead);
  const [only] = live;
  if (TERMINAL_RUN_STATUSES.includes(run.status)) {
    if (live.length === 0) return null;
    return runFinding(ViolationKind.ENDED_RUN_WITH_LIVE_JOB, run, live, `run ${run.runId} ended ${run.status} but still has ${live.length} live job(s): ${live.map((j) => `${j.id} (${j.state})`).join(', ')}`);
  }
  if (live.length > 1) {
    return runFinding(ViolationKind.RUN_WITH_EXTRA_JOBS, run, live, `run ${run.runId} (${run.status}) has ${live.length} live jobs, one too many: ${live.map((j) => `${j.id} (${j.stage}, ${j.state})`).join(', ')}`);
  }
  if (only === undefined) {
    if (run.status === RunStatus.dead_lettered && run.jobs.length > 0) return null;
    const what = run.status === RunStatus.dead_lettered ? 'no job at all (nothing to replay)' : 'no live job: nothing can move it on';
    return runFinding(ViolationKind.RUN_WITHOUT_JOB, run, [], `run ${run.runId} is ${run.status} at stage ${run.currentStage ?? '-'} with ${what}`);
  }
  const expected =
    run.status === RunStatus.parked
      ? only.state === JobState.parked
      : run.status === RunStatus.dead_lettered
        ? only.kind === JobKind.rollback
        : only.state !== JobState.parked;
  if (expected) return null;
  return runFinding(ViolationKind.RUN_JOB_STATE_MISMATCH, run, [only], `run ${run.runId} is ${run.status} but its live job ${only.id} is a ${only.kind} job in state ${only.state}`);
}

/** Every run is held by exactly the jobs its status calls for. */
export function checkRuns(ctx: CheckContext): Promise<boolean> {
  return scanPages(
    ctx,
    (page) => ctx.store.audit.runJobs(page),
    (runs) => {
      for (const run of runs) {
        const problem = runProblem(run);
        if (problem) ctx.report(problem);
      }
    },
  );
}

/** A ledger mismatch as a violation. */
function ledgerFinding(m: LedgerMismatch): RunFinding {
  const what = m.kind === JobKind.stage ? `stage ${m.stage}` : `the rollback of stage ${m.stage}`;
  const status = m.kind === JobKind.stage ? m.stageStatus : m.rollbackStatus;
  const missing = m.problem === LedgerProblem.missing;
  return {
    kind: missing ? ViolationKind.LEDGER_ENTRY_MISSING : ViolationKind.LEDGER_ENTRY_UNEXPECTED,
    message: missing
      ? `${what} of run ${m.runId} succeeded but the ledger has no entry ${m.key}`
      : `the ledger has entry ${m.key} but ${what} of run ${m.runId} ${m.stageStatus === null ? 'does not exist' : `is ${status ?? 'not started'}`}`,
    ids: { runId: m.runId, stage: m.stage, ledgerKey: m.key },
    details: { kind: m.kind, stageStatus: m.stageStatus, rollbackStatus: m.rollbackStatus },
  };
}

/** A ledger entry exists exactly for each succeeded stage and rollback. */
export function checkLedger(ctx: CheckContext): Promise<boolean> {
  return scanPages(
    ctx,
    (page) => ctx.store.audit.ledgerMismatches(page),
    (mismatches) => {
      for (const mismatch of mismatches) ctx.report(ledgerFinding(mismatch));
    },
  );
}
