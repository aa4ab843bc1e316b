/**
 * A held job's abort (src/engine/job-abort.ts): the handler's AbortSignal is made on first read,
 * so it must read the same whether it was made before or after the abort, and the executor's
 * listener must hear the first reason once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StageAbortError } from '../../src/engine/abort-reason.ts';
import { JobAbort } from '../../src/engine/job-abort.ts';

describe('JobAbort', () => {
  it('a signal read before the abort fires once with the first reason; later aborts change nothing', () => {
    const abort = new JobAbort();
    const signal = abort.signal;
    const heard: unknown[] = [];
    signal.addEventListener('abort', () => heard.push(signal.reason));
    const timeout = new StageAbortError('timeout', 'timed out');
    abort.abort(timeout);
    abort.abort(new StageAbortError('shutdown', 'stopping'));
    assert.deepEqual(heard, [timeout]);
    assert.equal(abort.reason, timeout);
    assert.equal(abort.signal, signal, 'one signal per job');
  });

  it('a signal first read after the abort is already aborted with its reason', () => {
    const abort = new JobAbort();
    const lost = new StageAbortError('lease_lost', 'lost');
    abort.abort(lost);
    assert.equal(abort.signal.aborted, true);
    assert.equal(abort.signal.reason, lost);
  });

  it('the listener hears the reason once, at once when the abort came first', () => {
    const before = new JobAbort();
    const heardBefore: StageAbortError[] = [];
    before.onAbort((reason) => heardBefore.push(reason));
    const cancelled = new StageAbortError('cancelled', 'cancelled');
    before.abort(cancelled);
    before.abort(new StageAbortError('timeout', 'late'));
    assert.deepEqual(heardBefore, [cancelled]);

    const after = new JobAbort();
    after.abort(cancelled);
    const heardAfter: StageAbortError[] = [];
    after.onAbort((reason) => heardAfter.push(reason));
    assert.deepEqual(heardAfter, [cancelled]);
    assert.equal(after.aborted, true);
  });
});
