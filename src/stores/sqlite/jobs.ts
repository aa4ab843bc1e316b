/**
 * The `jobs` sub-port of the SQLite store: submit, claim, heartbeat, commit, hand back and reap,
 * each one BEGIN IMMEDIATE transaction over the modules of `jobs/`.
 */
import type { JobsPort, SubmitRunRequest, SubmitRunResult } from '../../core/ports/jobs.ts';
import type { SqliteContext } from './context.ts';
import { claimJobs } from './jobs/claim.ts';
import { commit } from './jobs/commit.ts';
import { reapExpiredLeases, releaseJobs, renewLeases } from './jobs/leases.ts';
import { submitRuns } from './jobs/submit.ts';

/** The job path over `ctx`. */
export function createJobsPort(ctx: SqliteContext): JobsPort {
  const submitBatch = ctx.write((requests: readonly SubmitRunRequest[]) => submitRuns(ctx, requests));
  // An empty batch needs no transaction, and so no write lock.
  const submitNothing = ctx.outside((): SubmitRunResult[] => []);
  return {
    submit: (requests) => (requests.length === 0 ? submitNothing() : submitBatch(requests)),
    claim: ctx.write((requests) => claimJobs(ctx, requests)),
    renew: ctx.write((renewals) => renewLeases(ctx, renewals)),
    commit: ctx.write((items) => commit(ctx, items)),
    release: ctx.write((leases) => releaseJobs(ctx, leases)),
    reap: ctx.write(() => reapExpiredLeases(ctx)),
  };
}
