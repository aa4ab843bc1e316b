/**
 * The `jobs` sub-port of the PostgreSQL store: submit, claim, heartbeat, commit, hand back and
 * reap. Each method is one transaction (most are one statement); the work is in `jobs/`.
 */
import type { JobsPort } from '../../core/ports/jobs.ts';
import type { PgContext } from './context.ts';
import { claimJobs } from './jobs/claim.ts';
import { commit } from './jobs/commit.ts';
import { reapExpiredLeases, releaseJobs, renewLeases } from './jobs/leases.ts';
import { submitRuns } from './jobs/submit.ts';

/** The job path over the context's pool. */
export function createJobsPort(ctx: PgContext): JobsPort {
  return ctx.port<JobsPort>({
    submit: (requests) => submitRuns(ctx, requests),
    claim: (requests) => claimJobs(ctx, requests),
    renew: (renewals) => renewLeases(ctx, renewals),
    commit: (items) => commit(ctx, items),
    release: (leases) => releaseJobs(ctx, leases),
    reap: () => reapExpiredLeases(ctx),
  });
}
