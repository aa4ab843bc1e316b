/**
 * Crash recovery with real processes: two `kiln worker` processes share one SQLite file; the one
 * running the `process` stage is SIGKILLed mid-stage. The other must pick the job up once the
 * lease expires (not before, not much after), the stage's success must be recorded once, and the
 * run must succeed.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createFsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { createKiln } from '../../src/engine/create-kiln.ts';
import { builtinPipelines } from '../../src/pipelines/index.ts';
import { killIfRunning, spawnKiln, waitUntil, type KilnProcess } from './kiln-process.ts';

/**
 * Bounds a hung child process; not a speed check. The test takes ~14 s under the suite's load
 * (three kiln processes to start, a lease to expire), and 30 s left cli-operator's like it too
 * little room once, so this one has 60.
 */
const E2E_TIMEOUT_MS = 60_000;

const LEASE_MS = 2_000;
const HEARTBEAT_MS = 500;
const POLL_MS = 100;
const STAGE_DELAY_MS = 2_500;
/** Scheduling slack on a loaded 2-core machine, on top of lease expiry and the survivor's poll. */
const SLACK_MS = 1_500;

const KILN_YAML = `
worker:
  pollMs: ${POLL_MS}
  reapMs: 200
pipelines:
  demo.sleep:
    defaults:
      leaseMs: ${LEASE_MS}
      heartbeatMs: ${HEARTBEAT_MS}
`;

test('a worker SIGKILLed mid-stage: the stage is redelivered within its lease, completes once on the other worker, and the run succeeds', { timeout: E2E_TIMEOUT_MS }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-crash-'));
  const dbPath = join(dir, 'kiln.db');
  await writeFile(join(dir, 'kiln.yaml'), KILN_YAML);
  // The test reads and submits through its own connection to the same file.
  const store = createSqliteStore({ path: dbPath });
  await store.migrate();
  const kiln = createKiln({ store, artifacts: createFsArtifactStore({ root: join(dir, 'artifacts') }), pipelines: builtinPipelines });
  const workers = new Map<string, KilnProcess>();
  for (const id of ['worker-a', 'worker-b']) workers.set(id, spawnKiln(['worker', '--worker-id', id, '--db', dbPath, '--config', 'kiln.yaml'], dir));
  t.after(async () => {
    for (const w of workers.values()) killIfRunning(w);
    await Promise.all([...workers.values()].map((w) => w.exited));
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  const outputs = (): string => [...workers].map(([id, w]) => `--- ${id} ---\n${w.output()}`).join('\n');

  const { run } = await kiln.submit('demo.sleep', { delayMs: STAGE_DELAY_MS });
  const leased = await waitUntil(
    'a worker to lease the process stage',
    async () => (await kiln.listJobs({ queue: 'demo.sleep.process', state: 'leased' }))[0],
    20_000,
  ).catch((err: unknown) => assert.fail(`${String(err)}\n${outputs()}`));
  const victimId = leased.leaseOwner ?? '';
  const survivorId = [...workers.keys()].find((id) => id !== victimId) ?? '';
  const victim = workers.get(victimId);
  assert.ok(victim, `lease owner ${victimId} is one of our workers`);
  assert.equal(leased.leaseMs, LEASE_MS, 'kiln.yaml lease applies');

  // Let the handler get well into its sleep (and heartbeat) before the crash.
  await new Promise((resolve) => setTimeout(resolve, HEARTBEAT_MS + 200));
  victim.child.kill('SIGKILL');
  const killedAt = Date.now();
  assert.equal((await victim.exited).signal, 'SIGKILL');

  const redelivered = await waitUntil(
    'the survivor to take over the process job',
    async () => {
      const job = await store.reads.getJob(leased.id);
      return job?.leaseOwner === survivorId ? job : undefined;
    },
    LEASE_MS + SLACK_MS + 5_000,
    25,
  );
  const takeoverMs = Date.now() - killedAt;
  t.diagnostic(`process job redelivered to ${survivorId} ${takeoverMs} ms after SIGKILL (lease ${LEASE_MS} ms)`);
  assert.ok(takeoverMs <= LEASE_MS + POLL_MS + SLACK_MS, `redelivered ${takeoverMs} ms after the kill; lease is ${LEASE_MS} ms`);
  assert.equal(redelivered.redeliveries, 1);
  assert.equal(redelivered.attempt, 2);

  const done = await kiln.waitForRun(run.id, { timeoutMs: 20_000 });
  assert.equal(done.run.status, 'succeeded', outputs());
  const processStage = done.stages.find((s) => s.stage === 'process');
  assert.equal(processStage?.attempts, 2);
  assert.equal(processStage?.status, 'succeeded');
  assert.deepEqual(
    done.stages.map((s) => s.status),
    ['succeeded', 'succeeded', 'succeeded'],
  );

  const ledger = await kiln.ledger(run.id);
  assert.deepEqual(
    ledger.map((e) => e.stage),
    ['prepare', 'process', 'finish'],
    'exactly one ledger entry per stage',
  );
  const processEntry = ledger.find((e) => e.stage === 'process');
  assert.equal((processEntry?.output as { attempt?: number } | undefined)?.attempt, 2, 'the recorded success is the survivor’s');

  const survivor = workers.get(survivorId);
  survivor?.child.kill('SIGTERM');
  assert.deepEqual(await survivor?.exited, { code: 0, signal: null }, outputs());
});
