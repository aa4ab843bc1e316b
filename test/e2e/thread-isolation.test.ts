/**
 * Proves what `isolation: thread` buys: a stage that busy-loops the CPU for 3 s under a 1 s lease,
 * with a second worker process polling the same queue. In a thread, heartbeats keep the lease and
 * the stage runs exactly once; inline, the blocked event loop lets the lease expire, the job is
 * redelivered to the second worker and the first worker's late commit is refused.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createSqliteBackend } from '../../src/backends/sqlite/index.ts';
import { createKiln } from '../../src/engine/create-kiln.ts';
import type { Kiln } from '../../src/engine/kiln-types.ts';
import busyPipeline from '../fixtures/busy-pipeline.ts';
import { spawnKiln, waitFor, makeTempDir, type KilnProcess } from '../support/processes.ts';

const SPIN_MS = 3_000;
const PIPELINES = new URL('../fixtures/busy-pipeline.ts', import.meta.url).pathname;

async function setUp(isolation: 'thread' | 'inline'): Promise<{ dir: string; db: string; config: string; kiln: Kiln; close: () => Promise<void> }> {
  const dir = await makeTempDir('kiln-isolation-');
  const db = `${dir}/kiln.db`;
  const config = `${dir}/kiln.yaml`;
  const { writeFile } = await import('node:fs/promises');
  await writeFile(config, `pipelines:\n  busy.spin:\n    stages:\n      spin:\n        isolation: ${isolation}\n`);
  const backend = createSqliteBackend({ path: db });
  await backend.migrate();
  const artifacts = { put: () => Promise.reject(new Error('unused')), get: () => Promise.reject(new Error('unused')), has: async () => false, collectOrphanedTemps: async () => 0 };
  const kiln = createKiln({ backend, artifacts, pipelines: [busyPipeline], policies: { 'busy.spin': { spin: { isolation } } } });
  return { dir, db, config, kiln, close: () => backend.close() };
}

function workerArgs(db: string, config: string, id: string): string[] {
  return ['worker', '--db', db, '--config', config, '--pipelines', PIPELINES, '--worker-id', id];
}

describe('thread isolation under a CPU-bound stage (two worker processes, one SQLite file)', () => {
  const procs: KilnProcess[] = [];
  after(async () => {
    await Promise.all(procs.map((p) => p.stop()));
  });

  it('thread: completes exactly once with no lease lost while a second worker polls the queue', async () => {
    const env = await setUp('thread');
    const a = spawnKiln(workerArgs(env.db, env.config, 'A'), { cwd: env.dir });
    procs.push(a);
    const { run } = await env.kiln.submit('busy.spin', { spinMs: SPIN_MS });
    await waitFor(async () => (await env.kiln.listJobs({ runId: run.id }))[0]?.leaseOwner === 'A', 15_000, 'worker A claims the job');
    const b = spawnKiln(workerArgs(env.db, env.config, 'B'), { cwd: env.dir });
    procs.push(b);
    const detail = await env.kiln.waitForRun(run.id, { timeoutMs: 20_000 });
    assert.equal(detail.run.status, 'succeeded');
    assert.equal(detail.stages[0]?.attempts, 1, 'one attempt: the lease was never lost');
    assert.equal((detail.stages[0]?.output as { pid: number }).pid, a.pid, 'worker A ran it');
    assert.equal((await env.kiln.ledger(run.id)).length, 1);
    assert.doesNotMatch(a.output(), /commit refused/);
    await Promise.all([a.stop(), b.stop()]);
    await env.close();
  });

  it('inline: the lease expires, the job is redelivered to the second worker and the late commit is refused', async () => {
    const env = await setUp('inline');
    const a = spawnKiln(workerArgs(env.db, env.config, 'A'), { cwd: env.dir });
    procs.push(a);
    const { run } = await env.kiln.submit('busy.spin', { spinMs: SPIN_MS });
    await waitFor(async () => (await env.kiln.listJobs({ runId: run.id }))[0]?.leaseOwner === 'A', 15_000, 'worker A claims the job');
    const b = spawnKiln(workerArgs(env.db, env.config, 'B'), { cwd: env.dir });
    procs.push(b);
    await waitFor(
      async () => {
        const job = (await env.kiln.listJobs({ runId: run.id }))[0];
        return job?.leaseOwner === 'B' && job.redeliveries >= 1;
      },
      15_000,
      'the job is redelivered to worker B',
    );
    await waitFor(async () => /commit refused[^\n]*lease_lost|lease_lost[^\n]*commit refused/.test(a.output()), 15_000, "worker A's late commit is refused");
    await env.kiln.cancelRun(run.id, 'test done').catch(() => undefined);
    await Promise.all([a.stop(), b.stop()]);
    await env.close();
  });
});
