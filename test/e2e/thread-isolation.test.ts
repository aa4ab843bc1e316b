/**
 * Proves what `isolation: thread` buys: a stage that busy-loops the CPU for 3 s under a 1 s lease,
 * with a second worker process polling the same queue. In a thread, heartbeats keep the lease and
 * the stage runs exactly once; inline, the blocked event loop lets the lease expire, the job is
 * redelivered to the second worker and the first worker's late commit is refused.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createFsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { createKiln } from '../../src/engine/create-kiln.ts';
import type { Kiln } from '../../src/engine/kiln-types.ts';
import busyPipeline from '../fixtures/busy-pipeline.ts';
import { killIfRunning, spawnKiln, waitUntil, type KilnProcess } from './kiln-process.ts';

const SPIN_MS = 3_000;
const PIPELINES = new URL('../fixtures/busy-pipeline.ts', import.meta.url).pathname;

async function setUp(isolation: 'thread' | 'inline'): Promise<{ dir: string; db: string; config: string; kiln: Kiln; close: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-isolation-'));
  const db = join(dir, 'kiln.db');
  const config = join(dir, 'kiln.yaml');
  await writeFile(config, `pipelines:\n  busy.spin:\n    stages:\n      spin:\n        isolation: ${isolation}\n`);
  const store = createSqliteStore({ path: db });
  await store.migrate();
  const artifacts = createFsArtifactStore({ root: join(dir, 'artifacts') });
  const kiln = createKiln({ store, artifacts, pipelines: [busyPipeline], policies: { 'busy.spin': { spin: { isolation } } } });
  const close = async (): Promise<void> => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  };
  return { dir, db, config, kiln, close };
}

function workerArgs(db: string, config: string, id: string): string[] {
  return ['worker', '--db', db, '--config', config, '--pipelines', PIPELINES, '--worker-id', id];
}

describe('thread isolation under a CPU-bound stage (two worker processes, one SQLite file)', () => {
  const procs: KilnProcess[] = [];
  after(() => procs.forEach(killIfRunning));

  /** Starts `kiln worker` with a fixed worker id. */
  const startWorker = (env: { dir: string; db: string; config: string }, id: string): KilnProcess => {
    const p = spawnKiln(workerArgs(env.db, env.config, id), env.dir);
    procs.push(p);
    return p;
  };
  /** SIGTERM (graceful stop) and wait for the exit. */
  const stop = async (...ps: KilnProcess[]): Promise<void> => {
    for (const p of ps) p.child.kill('SIGTERM');
    await Promise.all(ps.map((p) => p.exited));
  };
  /** Waits until the run's job is leased by `owner` (and redelivered at least `redeliveries` times). */
  const leasedBy = (kiln: Kiln, runId: string, owner: string, redeliveries = 0) =>
    waitUntil(`job leased by ${owner}`, async () => {
      const job = (await kiln.listJobs({ runId }))[0];
      return job?.leaseOwner === owner && job.redeliveries >= redeliveries ? job : undefined;
    }, 15_000);

  it('thread: completes exactly once with no lease lost while a second worker polls the queue', async () => {
    const env = await setUp('thread');
    const a = startWorker(env, 'A');
    const { run } = await env.kiln.submit('busy.spin', { spinMs: SPIN_MS });
    await leasedBy(env.kiln, run.id, 'A');
    const b = startWorker(env, 'B');
    const detail = await env.kiln.waitForRun(run.id, { timeoutMs: 20_000 });
    assert.equal(detail.run.status, 'succeeded');
    assert.equal(detail.stages[0]?.attempts, 1, 'one attempt: the lease was never lost');
    assert.equal((detail.stages[0]?.output as { pid: number }).pid, a.child.pid, 'worker A ran it');
    assert.equal((await env.kiln.ledger(run.id)).length, 1);
    assert.doesNotMatch(a.output(), /commit refused/);
    await stop(a, b);
    await env.close();
  });

  it('inline: the lease expires, the job is redelivered to the second worker and the late commit is refused', async () => {
    const env = await setUp('inline');
    const a = startWorker(env, 'A');
    const { run } = await env.kiln.submit('busy.spin', { spinMs: SPIN_MS });
    await leasedBy(env.kiln, run.id, 'A');
    const b = startWorker(env, 'B');
    await leasedBy(env.kiln, run.id, 'B', 1);
    const refused = await waitUntil("worker A's late commit is refused", async () => {
      const line = a.output().split('\n').find((l) => l.includes('commit refused'));
      return line ? (JSON.parse(line) as { outcome: string; job_id: string }) : undefined;
    }, 15_000);
    assert.equal(refused.outcome, 'lease_lost');
    await env.kiln.cancelRun(run.id, 'test done').catch(() => undefined); // it may have ended by now
    await stop(a, b);
    await env.close();
  });
});
