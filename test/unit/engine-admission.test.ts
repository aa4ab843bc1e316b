/**
 * The engine's admission (src/engine/admission.ts) on the memory store and a fake clock: the
 * submit-rate token bucket per tenant (burst, refill at the rate, Retry-After = time until the
 * tokens are back, tokens of deduplicated or refused submissions given back, a batch larger than
 * the burst passes once the bucket is full), per-tenant overrides over the defaults, and no
 * admission at all when nothing is configured.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AdmissionRefusedError } from '../../src/core/errors.ts';
import { definePipeline } from '../../src/core/pipeline/define-pipeline.ts';
import type { AdmissionLimits } from '../../src/engine/admission.ts';
import { createAdmission } from '../../src/engine/admission.ts';
import { createFakeClock } from '../../src/core/clock.ts';
import { createEngineHarness } from '../support/engine-harness.ts';

const echo = definePipeline({ name: 'echo', version: 1, stages: [{ name: 'only', handler: () => null }] });

async function harness(admission: AdmissionLimits) {
  return createEngineHarness([echo], undefined, { admission });
}

async function refusal(promise: Promise<unknown>): Promise<AdmissionRefusedError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof AdmissionRefusedError, String(err));
    return err;
  }
  assert.fail('expected an AdmissionRefusedError');
}

describe('engine admission', () => {
  it('a tenant gets its burst at once, then one run per 1/rate seconds; Retry-After is the time until a token', async () => {
    const { kiln, clock } = await harness({ tenantDefaults: { submitRate: 2, submitBurst: 3 } });
    for (let i = 0; i < 3; i++) await kiln.submit('echo', { i }, { tenant: 'acme' });
    const refused = await refusal(kiln.submit('echo', { i: 3 }, { tenant: 'acme' }));
    assert.equal(refused.code, 'TENANT_RATE_LIMITED');
    assert.equal(refused.retryAfterMs, 500);
    await clock.advance(200);
    assert.equal((await refusal(kiln.submit('echo', { i: 3 }, { tenant: 'acme' }))).retryAfterMs, 300);
    await clock.advance(300);
    assert.equal((await kiln.submit('echo', { i: 3 }, { tenant: 'acme' })).created, true);
    assert.equal((await kiln.submit('echo', { i: 4 }, { tenant: 'globex' })).created, true, 'each tenant has its own bucket');
    assert.equal((await kiln.listRuns({ tenant: 'acme' })).length, 4);
  });

  it('a deduplicated submission gives its token back, and a refused one spends none', async () => {
    const { kiln, recorded } = await harness({ tenantDefaults: { submitRate: 1, submitBurst: 2, maxInFlightRuns: 1 } });
    await kiln.submit('echo', { k: 1 }, { tenant: 'acme', idempotencyKey: 'k' });
    for (let i = 0; i < 5; i++) assert.equal((await kiln.submit('echo', { k: 1 }, { tenant: 'acme', idempotencyKey: 'k' })).created, false);
    for (let i = 0; i < 3; i++) assert.equal((await refusal(kiln.submit('echo', { i }, { tenant: 'acme' }))).code, 'TENANT_IN_FLIGHT_LIMIT');
    const [run] = await kiln.listRuns({ tenant: 'acme' });
    await kiln.cancelRun(run?.id ?? '');
    assert.equal((await kiln.submit('echo', { i: 9 }, { tenant: 'acme' })).created, true, 'the second token of the burst is still there');
    assert.equal((await refusal(kiln.submit('echo', { i: 10 }, { tenant: 'acme' }))).code, 'TENANT_RATE_LIMITED');
    assert.deepEqual(recorded.refused, { TENANT_IN_FLIGHT_LIMIT: 3, TENANT_RATE_LIMITED: 1 }, 'each refusal is observed (kiln_submit_refused_total)');
  });

  it('a batch larger than the burst passes on a full bucket and leaves it in debt', async () => {
    const { kiln } = await harness({ tenantDefaults: { submitRate: 1, submitBurst: 2 } });
    const results = await kiln.submitMany('echo', Array.from({ length: 5 }, (_, i) => ({ input: { i }, options: { tenant: 'acme' } })));
    assert.equal(results.length, 5);
    // 2 - 5 = -3 tokens: one token is back after 4 s.
    assert.equal((await refusal(kiln.submit('echo', { i: 5 }, { tenant: 'acme' }))).retryAfterMs, 4_000);
  });

  it('a tenant override wins over the defaults field by field; runs without a tenant count as one tenant', async () => {
    const { kiln } = await harness({ tenantDefaults: { maxInFlightRuns: 1 }, tenants: { acme: { maxInFlightRuns: 2 } } });
    await kiln.submit('echo', { i: 1 }, { tenant: 'acme' });
    await kiln.submit('echo', { i: 2 }, { tenant: 'acme' });
    assert.equal((await refusal(kiln.submit('echo', { i: 3 }, { tenant: 'acme' }))).details?.limit, 2);
    await kiln.submit('echo', { i: 4 }, { tenant: 'globex' });
    assert.equal((await refusal(kiln.submit('echo', { i: 5 }, { tenant: 'globex' }))).details?.limit, 1);
    await kiln.submit('echo', { i: 6 });
    assert.equal((await refusal(kiln.submit('echo', { i: 7 }))).details?.tenant, null);
  });

  it('limits that set nothing make no admission at all', () => {
    const clock = createFakeClock();
    assert.equal(createAdmission(undefined, clock), undefined);
    assert.equal(createAdmission({ tenantDefaults: {}, tenants: { acme: {} }, queues: { 'echo.only': {} } }, clock), undefined);
    assert.notEqual(createAdmission({ queues: { 'echo.only': { maxBacklog: 1 } } }, clock), undefined);
  });
});
