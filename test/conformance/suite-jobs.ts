/**
 * Conformance, jobs sub-port: the job path — submit, claim, renew, commit, release, reap. The
 * parts live in ./jobs/, one file per theme; this file is the sub-port's one entry.
 */
import { describe } from 'node:test';
import type { StoreHarness } from './fixture.ts';
import { describeSubmitAdmission } from './jobs/admission.ts';
import { describeCommitBatches } from './jobs/batches.ts';
import { describeClaim, describeRenew } from './jobs/claim-and-renew.ts';
import { describeCommit } from './jobs/commit.ts';
import { describeClaimFairness } from './jobs/fairness.ts';
import { describeCommitPublications } from './jobs/publish.ts';
import { describeReap, describeRelease } from './jobs/release-and-reap.ts';
import { describeSubmitBatches, describeSubmitOne } from './jobs/submit.ts';
import { describeTraceParent } from './jobs/trace-parent.ts';

/** Declares the jobs sub-port's tests. */
export function describeJobsPort(harness: StoreHarness): void {
  describe('jobs sub-port', () => {
    describeSubmitOne(harness);
    describeSubmitBatches(harness);
    describeSubmitAdmission(harness);
    describeTraceParent(harness);
    describeClaim(harness);
    describeClaimFairness(harness);
    describeRenew(harness);
    describeCommit(harness);
    describeCommitBatches(harness);
    describeCommitPublications(harness);
    describeRelease(harness);
    describeReap(harness);
  });
}
