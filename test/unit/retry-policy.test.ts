import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConflictError, StageFailure, ValidationError } from '../../src/core/errors.ts';
import type { StageErrorRecord } from '../../src/core/model.ts';
import { backoffDelayMs, classifyError, decideFailure, lockWaitDelayMs } from '../../src/core/policy/retry.ts';
import { DEFAULT_STAGE_POLICY, mergeStagePolicy } from '../../src/core/policy/stage-policy.ts';
import type { JobSpec } from '../../src/core/ports/jobs.ts';
import { assertReplayable } from '../../src/core/run/transitions.ts';

const policy = mergeStagePolicy(DEFAULT_STAGE_POLICY, { maxAttempts: 3, interventionAttempts: 2, backoff: { baseMs: 100, capMs: 1_000 } });
const rollback: JobSpec = { stage: 'a', queue: 'p.a', kind: 'rollback', maxAttempts: 3, priority: 0 };
const error = (cls: StageErrorRecord['class']): StageErrorRecord => ({ class: cls, code: 'X', message: cls });

describe('decideFailure', () => {
  it('fails the run at once on a permanent error, on the first attempt, with the rollback to run', () => {
    assert.deepEqual(decideFailure({ error: error('permanent'), attempt: 1, policy, rollback }), { action: 'fail', rollback });
    assert.deepEqual(decideFailure({ error: error('permanent'), attempt: 1, policy, rollback: null }), { action: 'fail', rollback: null });
  });

  it('retries a transient error with backoff, then dead-letters (replayable) when the attempts run out', () => {
    assert.deepEqual(decideFailure({ error: error('transient'), attempt: 1, policy, rollback, random: () => 0.5 }), { action: 'retry', delayMs: 50 });
    assert.deepEqual(decideFailure({ error: error('transient'), attempt: 3, policy, rollback }), { action: 'dead_letter', rollback });
  });

  it('parks after the intervention attempts', () => {
    assert.equal(decideFailure({ error: error('intervention'), attempt: 1, policy, rollback }).action, 'retry');
    assert.deepEqual(decideFailure({ error: error('intervention'), attempt: 2, policy, rollback }), { action: 'park' });
  });

  it('classifies StageFailure.permanent and non-retryable kiln errors as permanent, anything else as transient', () => {
    assert.equal(classifyError(StageFailure.permanent('bad', { code: 'ASSET_UNSUPPORTED_FORMAT' })).class, 'permanent');
    assert.equal(classifyError(new ValidationError('bad input')).class, 'permanent');
    assert.equal(classifyError(new Error('flaky')).class, 'transient');
  });
});

describe('backoff', () => {
  const backoff = { baseMs: 100, capMs: 1_000 };
  const top = () => 1 - Number.EPSILON;

  it('doubles the ceiling with every attempt until the cap, then stays at the cap', () => {
    const ceilings = Array.from({ length: 8 }, (_, i) => backoffDelayMs(backoff, i + 1, top));
    assert.deepEqual(ceilings, [99, 199, 399, 799, 999, 999, 999, 999]);
  });

  it('draws the full jitter uniformly from zero to the ceiling', () => {
    assert.equal(backoffDelayMs(backoff, 3, () => 0), 0);
    assert.equal(backoffDelayMs(backoff, 3, () => 0.5), 200);
    assert.equal(backoffDelayMs(backoff, 4, () => 0.25), 200);
  });

  it('stays at the cap for very late attempts (no overflow to Infinity or NaN)', () => {
    assert.equal(backoffDelayMs(backoff, 10_000, top), 999);
    assert.equal(backoffDelayMs({ baseMs: 1_000, capMs: 60_000 }, 1_000, () => 0.5), 30_000);
  });

  it('the retry decision follows the same curve at every attempt, and a retryAfterMs hint wins', () => {
    const policy5 = mergeStagePolicy(DEFAULT_STAGE_POLICY, { maxAttempts: 10, backoff });
    const delays = [1, 2, 3, 4, 5, 6].map((attempt) => decideFailure({ error: error('transient'), attempt, policy: policy5, rollback, random: top }));
    assert.deepEqual(delays, [99, 199, 399, 799, 999, 999].map((delayMs) => ({ action: 'retry', delayMs })));
    const hinted = decideFailure({ error: { ...error('transient'), retryAfterMs: 5_000 }, attempt: 4, policy: policy5, rollback, random: top });
    assert.deepEqual(hinted, { action: 'retry', delayMs: 5_000 });
  });
});

describe('assertReplayable', () => {
  it('refuses the job of a failed run with INVALID_TRANSITION naming it, and allows a dead-lettered run', () => {
    assert.throws(
      () => assertReplayable('run_1', 'failed', 'job_1'),
      (err: unknown) => err instanceof ConflictError && err.code === 'INVALID_TRANSITION' && /failed permanently/.test(err.message) && err.details?.['jobId'] === 'job_1',
    );
    assert.throws(() => assertReplayable('run_1', 'succeeded', 'job_1'), { code: 'INVALID_TRANSITION' });
    assert.doesNotThrow(() => assertReplayable('run_1', 'dead_lettered', 'job_1'));
  });
});

describe('lockWaitDelayMs', () => {
  it('starts at 50-100 ms, grows with the wait so far up to 2.5-5 s, and never outlasts the holder', () => {
    const low = () => 0;
    const high = () => 1;
    assert.deepEqual([lockWaitDelayMs(0, 60_000, low), lockWaitDelayMs(0, 60_000, high)], [50, 100]);
    assert.deepEqual([lockWaitDelayMs(1_000, 60_000, low), lockWaitDelayMs(1_000, 60_000, high)], [500, 1_000]);
    assert.deepEqual([lockWaitDelayMs(600_000, 60_000, low), lockWaitDelayMs(600_000, 60_000, high)], [2_500, 5_000]);
    assert.equal(lockWaitDelayMs(4_000, 700, high), 700, 'no later than the holder’s lock expires');
    assert.equal(lockWaitDelayMs(4_000, -5, high), 100, 'an expired holder is retried after the base');
  });
});
