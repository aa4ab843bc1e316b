/**
 * The store conformance suite: the Store port's behaviour, defined once and run unchanged
 * against every store. It uses only the port; each test gets a fresh store on a fake clock
 * (lease expiry is `clock.advance`, never a sleep). One suite file per sub-port
 * (`suite-<sub-port>.ts`, a larger one with its parts in the folder of the same name), plus
 * `suite-root.ts` for the root's own methods; shared set-up lives in `fixture.ts`.
 */
import { describe } from 'node:test';
import type { StoreHarness } from './fixture.ts';
import { describeArtifactRefsPort } from './suite-artifact-refs.ts';
import { describeAuditPort } from './suite-audit.ts';
import { describeBlobsPort } from './suite-blobs.ts';
import { describeCachePort } from './suite-cache.ts';
import { describeJobsPort } from './suite-jobs.ts';
import { describeLocksPort } from './suite-locks.ts';
import { describeOperatorPort } from './suite-operator.ts';
import { describePublicationsPort } from './suite-publications.ts';
import { describeReadsPort } from './suite-reads.ts';
import { describeRequestsPort } from './suite-requests.ts';
import { describeRetentionPort } from './suite-retention.ts';
import { describeRootPort } from './suite-root.ts';
import { describeStatsPort } from './suite-stats.ts';
import { describeTokensPort } from './suite-tokens.ts';
import { describeVersionsPort } from './suite-versions.ts';

export type { StoreHarness, SuiteContext } from './fixture.ts';

/** Declares the whole conformance suite for the store that `harness` creates. */
export function describeStoreSuite(name: string, harness: StoreHarness): void {
  describe(`store conformance: ${name}`, () => {
    describeRootPort(harness);
    describeJobsPort(harness);
    describeOperatorPort(harness);
    describeReadsPort(harness);
    describeCachePort(harness);
    describePublicationsPort(harness);
    describeRequestsPort(harness);
    describeVersionsPort(harness);
    describeArtifactRefsPort(harness);
    describeAuditPort(harness);
    describeLocksPort(harness);
    describeStatsPort(harness);
    describeTokensPort(harness);
    describeRetentionPort(harness);
    describeBlobsPort(harness);
  });
}
