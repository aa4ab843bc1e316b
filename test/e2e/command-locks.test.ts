/**
 * A command stage declared in kiln.yaml with a `lock`, served by two `kiln worker` processes on one
 * store: the commands' own recorded intervals never overlap, and each command saw the fence of the
 * lock it ran under (KILN_LOCK_FENCE), growing from one holder to the next.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test, type TestContext } from 'node:test';
import { createFsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import { createCommandPipeline } from '../../src/commands/command-pipeline.ts';
import { loadConfig } from '../../src/config/load.ts';
import { createKiln } from '../../src/engine/create-kiln.ts';
import { postgresSkipReason } from '../support/postgres-cluster.ts';
import { cleanEnv, killIfRunning, spawnKiln } from './kiln-process.ts';
import { postgresWorkspace, sqliteWorkspace, type LockWorkspace } from './lock-workers.ts';

const SCRIPT = fileURLToPath(new URL('../fixtures/commands/interval.sh', import.meta.url));
const RUNS = 50;

interface Interval {
  pid: number;
  fence: number;
  start: number;
  end: number;
}

async function commandsNeverOverlap(ws: LockWorkspace, t: TestContext): Promise<void> {
  const intervals = join(ws.dir, 'intervals.jsonl');
  const yaml = [
    'worker:',
    '  pollMs: 50',
    '  reapMs: 200',
    '  lock: { provider: store, ttl: 3s }',
    `  workDir: ${join(ws.dir, 'work')}`,
    'log: { level: warn }',
    'pipelines:',
    '  locked:',
    '    inputs: { assetId: string }',
    '    stages:',
    '      - name: render',
    `        run: [${JSON.stringify(SCRIPT)}, ${JSON.stringify(intervals)}, "0.05"]`,
    '        lease: 2s',
    '        lock: { key: "render:{{input.assetId}}" }',
    '',
  ].join('\n');
  const config = join(ws.dir, 'kiln.yaml');
  await writeFile(config, yaml);
  const env = cleanEnv(ws.env);
  const workers = ['cmd-a', 'cmd-b'].map((id) => spawnKiln(['worker', '--worker-id', id, '--config', config, ...ws.storeArgs], ws.dir, env));
  ws.defer(async () => {
    for (const w of workers) killIfRunning(w);
    await Promise.all(workers.map((w) => w.exited));
  });
  const output = (): string => workers.map((w) => w.output()).join('\n---\n');

  const resolved = loadConfig({ file: config, cwd: ws.dir, env: {}, pipelines: [] });
  const kiln = createKiln({ store: ws.store, artifacts: createFsArtifactStore({ root: join(ws.dir, 'artifacts') }), pipelines: resolved.commandPipelines.map(createCommandPipeline) });
  const runs = await kiln.submitMany('locked', Array.from({ length: RUNS }, () => ({ input: { assetId: 'shared' } })));
  for (const { run } of runs) {
    const detail = await kiln.waitForRun(run.id, { timeoutMs: 120_000 });
    assert.equal(detail.run.status, 'succeeded', `${run.id}: ${JSON.stringify(detail.run.error)}\n${output()}`);
  }

  const recorded = (await readFile(intervals, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Interval);
  assert.equal(recorded.length, RUNS, 'one interval per run');
  const sorted = recorded.sort((a, b) => a.start - b.start);
  for (let i = 1; i < sorted.length; i++) {
    const [prev, next] = [sorted[i - 1] as Interval, sorted[i] as Interval];
    assert.ok(next.start >= prev.end, `command ${next.pid} started at ${next.start}, before ${prev.pid} ended at ${prev.end}`);
    assert.ok(typeof next.fence === 'number' && next.fence > prev.fence, `KILN_LOCK_FENCE grows: ${prev.fence} then ${next.fence}`);
  }
  t.diagnostic(`${RUNS} command runs, fences ${sorted[0]?.fence}..${sorted.at(-1)?.fence}`);
  assert.equal(await ws.store.locks.get('render:shared'), null, 'the last holder released the lock');
}

describe('a command stage with a lock on two worker processes', () => {
  test('SQLite: the commands’ own intervals never overlap and each saw a growing KILN_LOCK_FENCE', { timeout: 150_000 }, async (t) => {
    await commandsNeverOverlap(await sqliteWorkspace(t), t);
  });

  test('PostgreSQL: the same', { timeout: 150_000, skip: postgresSkipReason() }, async (t) => {
    await commandsNeverOverlap(await postgresWorkspace(t), t);
  });
});
