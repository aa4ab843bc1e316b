/**
 * The backend conformance suite: the Backend port's behaviour, defined once and run unchanged
 * against every backend. It uses only the port; each test gets a fresh store on a fake clock
 * (lease expiry is `clock.advance`, never a sleep). The parts live in `backend-suite-*.ts`.
 */
import { describe } from 'node:test';
import { describeAssetSupport } from './backend-suite-assets.ts';
import { describeBatches } from './backend-suite-batches.ts';
import { describeCache } from './backend-suite-cache.ts';
import { describeCommits } from './backend-suite-commits.ts';
import type { BackendHarness } from './backend-suite-fixture.ts';
import { describeLeases } from './backend-suite-leases.ts';
import { describeOperatorActions } from './backend-suite-operator.ts';
import { describePublicationsAndRequests } from './backend-suite-publications.ts';
import { describeQueries } from './backend-suite-queries.ts';
import { describeBatchSubmission } from './backend-suite-submit-batches.ts';
import { describeSubmission } from './backend-suite-submit.ts';

export type { BackendHarness, SuiteContext } from './backend-suite-fixture.ts';

/** Declares the whole conformance suite for the backend that `harness` creates. */
export function describeBackend(name: string, harness: BackendHarness): void {
  describe(`backend conformance: ${name}`, () => {
    describeSubmission(harness);
    describeBatchSubmission(harness);
    describeLeases(harness);
    describeCommits(harness);
    describeBatches(harness);
    describeOperatorActions(harness);
    describeQueries(harness);
    describePublicationsAndRequests(harness);
    describeCache(harness);
    describeAssetSupport(harness);
  });
}
