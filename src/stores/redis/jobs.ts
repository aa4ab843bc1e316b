/**
 * The `jobs` sub-port of the Redis store: submit, claim, heartbeat, commit, hand back and reap,
 * each ONE script call (routines/jobs-*.lua, the moves they share in lib-jobs.lua); the client
 * side of each is in `jobs/`.
 */
import type { JobsPort } from '../../core/ports/jobs.ts';
import type { RedisContext } from './context.ts';
import { claimJobs } from './jobs/claim.ts';
import { commit } from './jobs/commit.ts';
import { reapExpiredLeases, releaseJobs, renewLeases } from './jobs/leases.ts';
import { submitRuns } from './jobs/submit.ts';

/** The job path over the context's scripts. */
export function createJobsPort(ctx: RedisContext): JobsPort {
  return ctx.port<JobsPort>({
    submit: (requests) => submitRuns(ctx, requests),
    claim: (requests) => claimJobs(ctx, requests),
    renew: (renewals) => renewLeases(ctx, renewals),
    commit: (items) => commit(ctx, items),
    release: (leases) => releaseJobs(ctx, leases),
    reap: () => reapExpiredLeases(ctx),
  });
}
