/**
 * The `jobs` sub-port of the memory store: submit, claim, heartbeat, commit, hand back and reap,
 * each one synchronous operation over the modules of `jobs/`.
 */
import type { JobsPort } from '../../core/ports/jobs.ts';
import type { MemoryContext } from './context.ts';
import { claimJobs } from './jobs/claim.ts';
import { commit } from './jobs/commit.ts';
import { reapExpiredLeases, releaseJobs, renewLeases } from './jobs/leases.ts';
import { submitRuns } from './jobs/submit.ts';

/** The job path over the state. */
export function createJobsPort(ctx: MemoryContext): JobsPort {
  const { state } = ctx;
  return {
    submit: ctx.atomic((requests) => submitRuns(state, requests)),
    claim: ctx.atomic((requests) => claimJobs(state, requests)),
    renew: ctx.atomic((renewals) => renewLeases(state, renewals)),
    commit: ctx.atomic((items) => commit(state, items)),
    release: ctx.atomic((leases) => releaseJobs(state, leases)),
    reap: ctx.atomic(() => reapExpiredLeases(state)),
  };
}
