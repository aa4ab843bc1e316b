/**
 * The store conformance suite: the Store port's behaviour, defined once and run unchanged
 * against every store. It uses only the port; each test gets a fresh store on a fake clock
 * (lease expiry is `clock.advance`, never a sleep). The parts live in `store-suite-*.ts`.
 */
import { describe } from 'node:test';
import { describeAssetSupport } from './store-suite-assets.ts';
import { describeBatches } from './store-suite-batches.ts';
import { describeCache } from './store-suite-cache.ts';
import { describeCommits } from './store-suite-commits.ts';
import type { StoreHarness } from './store-suite-fixture.ts';
import { describeLeases } from './store-suite-leases.ts';
import { describeOperatorActions } from './store-suite-operator.ts';
import { describePublicationsAndRequests } from './store-suite-publications.ts';
import { describeQueries } from './store-suite-queries.ts';
import { describeBatchSubmission } from './store-suite-submit-batches.ts';
import { describeSubmission } from './store-suite-submit.ts';

export type { StoreHarness, SuiteContext } from './store-suite-fixture.ts';

/** Declares the whole conformance suite for the store that `harness` creates. */
export function describeStoreSuite(name: string, harness: StoreHarness): void {
  describe(`store conformance: ${name}`, () => {
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
