/**
 * The run rule of `kiln verify` (`runProblem`): which jobs each run status calls for. Runs and
 * jobs here are what the audit sub-port returns; no store is involved.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JobKind, JobState, RunStatus } from '../../src/core/model.ts';
import type { RunJobs } from '../../src/core/ports/audit.ts';
import { runProblem } from '../../src/engine/verify/check-records.ts';

/** A run of `status` with jobs given as `<state>` or `<kind>:<state>`. */
function run(status: RunStatus, ...jobs: string[]): RunJobs {
  return {
    runId: 'run_1',
    pipeline: 'demo',
    status,
    currentStage: 'a',
    jobs: jobs.map((spec, i) => {
      const [kind, state] = spec.includes(':') ? spec.split(':') : ['stage', spec];
      return { id: `job_${i + 1}`, stage: 'a', kind: kind as JobKind, state: state as JobState };
    }),
  };
}

/** The kind of violation `runProblem` finds, or null. */
const kindOf = (r: RunJobs): string | null => runProblem(r)?.kind ?? null;

test('a run not ended moves on through exactly one live job in a state its status allows', () => {
  const healthy: RunJobs[] = [
    run('queued', 'ready'),
    run('running', 'ready'),
    run('running', 'leased'),
    run('running', 'stage:dead', 'rollback:ready'),
    run('parked', 'parked'),
    run('dead_lettered', 'dead'),
    run('dead_lettered', 'dead', 'rollback:leased'),
    run('dead_lettered', 'dead', 'rollback:parked'),
    run('dead_lettered', 'dead', 'rollback:dead'),
  ];
  for (const r of healthy) assert.equal(kindOf(r), null, `${r.status} ${r.jobs.map((j) => `${j.kind}:${j.state}`).join(' ')}`);
});

test('a stuck run, a run with two live jobs and a job in the wrong state are each reported, with the job ids', () => {
  assert.equal(kindOf(run('queued')), 'RUN_WITHOUT_JOB');
  assert.equal(kindOf(run('running', 'dead')), 'RUN_WITHOUT_JOB', 'a dead job does not move a running run');
  assert.equal(kindOf(run('parked')), 'RUN_WITHOUT_JOB');
  assert.equal(kindOf(run('dead_lettered')), 'RUN_WITHOUT_JOB', 'nothing left to replay');

  const extra = runProblem(run('running', 'ready', 'leased', 'dead'));
  assert.equal(extra?.kind, 'RUN_WITH_EXTRA_JOBS');
  assert.deepEqual(extra?.ids, { runId: 'run_1', jobIds: ['job_1', 'job_2'] });

  const mismatch = runProblem(run('parked', 'ready'));
  assert.equal(mismatch?.kind, 'RUN_JOB_STATE_MISMATCH');
  assert.deepEqual(mismatch?.ids, { runId: 'run_1', jobId: 'job_1' });
  assert.equal(kindOf(run('running', 'parked')), 'RUN_JOB_STATE_MISMATCH');
  assert.equal(kindOf(run('dead_lettered', 'ready')), 'RUN_JOB_STATE_MISMATCH', 'a dead-lettered run runs compensations only');
});

test('an ended run may keep dead jobs, never a live one', () => {
  for (const status of ['succeeded', 'failed', 'cancelled', 'superseded'] as const) {
    assert.equal(kindOf(run(status)), null);
    assert.equal(kindOf(run(status, 'dead')), null);
    assert.equal(kindOf(run(status, 'dead', 'ready')), 'ENDED_RUN_WITH_LIVE_JOB', status);
  }
});
