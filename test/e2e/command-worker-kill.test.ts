/**
 * A `kiln worker` SIGKILLed while its command stage runs a 30-second command: a SIGKILLed process
 * cleans nothing up, so the command's supervisor must notice its worker is gone and kill the
 * command's process group. Within 2 s no process of that group may be left (checked in /proc),
 * and the stage is redelivered to another worker once the lease expires and completes once.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { createFsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import { createCommandPipeline } from '../../src/commands/command-pipeline.ts';
import { loadConfig } from '../../src/config/load.ts';
import { createKiln } from '../../src/engine/create-kiln.ts';
import { eventually, isGone, processesInGroup } from '../support/processes.ts';
import { cleanEnv, spawnKiln, waitUntil } from './kiln-process.ts';
import { openE2eScene, qrE2eStoreCases } from './qr-stores.ts';

const FIXTURES = fileURLToPath(new URL('../fixtures/commands/', import.meta.url));
const STEP_TIMEOUT_MS = 30_000;

const KILN_YAML = (dir: string): string => `
worker:
  pollMs: 100
  reapMs: 200
pipelines:
  t.kill:
    stages:
      - name: long
        run: ${FIXTURES}slow-once.sh
        env: { MARKER_FILE: ${dir}/marker }
        lease: 2s
        timeout: 60s
`;

test('a worker SIGKILLed during a 30 s command leaves none of its processes after 2 s; the stage is redelivered and completes once', { timeout: 90_000 }, async (t) => {
  const { dir, store, procs } = await openE2eScene(t, qrE2eStoreCases().sqlite, 'kiln-cmd-kill-');
  const configFile = join(dir, 'kiln.yaml');
  await writeFile(configFile, KILN_YAML(dir));
  const env = cleanEnv({ ...store.env, KILN_LOG_LEVEL: 'warn' });
  const workerArgs = (id: string): string[] => ['worker', '--worker-id', id, '--config', configFile, ...store.args];

  const doomed = spawnKiln(workerArgs('doomed'), dir, env);
  procs.push(doomed);
  // The test submits through its own engine over the same store, with the same declared pipeline.
  const config = loadConfig({ file: configFile, cwd: dir, env: {}, pipelines: [] });
  const kiln = createKiln({ store: store.store, artifacts: createFsArtifactStore({ root: join(dir, 'artifacts') }), pipelines: config.commandPipelines.map(createCommandPipeline) });
  const { run } = await kiln.submit('t.kill', {});

  // Kill only once the command is known to run: it writes its marker after starting its child.
  const marker = join(dir, 'marker');
  await waitUntil('the command to start', async () => (existsSync(marker) ? true : undefined), STEP_TIMEOUT_MS).catch((err: unknown) =>
    assert.fail(`${String(err)}\n${doomed.output()}`),
  );
  const [pgid = 0, ...pids] = readFileSync(marker, 'utf8').trim().split(' ').map(Number);
  const group = processesInGroup(pgid);
  assert.ok(group.length >= 3, `supervisor, command and its child run in group ${pgid}: ${group.join(', ')}`);
  assert.ok(pids.every((pid) => group.includes(pid)));

  doomed.child.kill('SIGKILL');
  const killedAt = performance.now();
  const emptied = await eventually(() => processesInGroup(pgid).length === 0 && pids.every(isGone), 2_000);
  const tookMs = Math.round(performance.now() - killedAt);
  assert.ok(emptied, `no process of group ${pgid} is left 2 s after the SIGKILL (left: ${processesInGroup(pgid).join(', ')})`);
  t.diagnostic(`the command's process group was empty ${tookMs} ms after the worker's SIGKILL`);
  assert.equal((await doomed.exited).signal, 'SIGKILL');

  const survivor = spawnKiln(workerArgs('survivor'), dir, env);
  procs.push(survivor);
  const done = await waitUntil(
    'the run to succeed on the second worker',
    async () => {
      const detail = await store.store.reads.getRun(run.id);
      return detail?.run.status === 'succeeded' ? detail : undefined;
    },
    STEP_TIMEOUT_MS,
  ).catch((err: unknown) => assert.fail(`${String(err)}\n${survivor.output()}`));
  assert.deepEqual(done.stages.map((s) => [s.stage, s.status, s.attempts]), [['long', 'succeeded', 2]]);
  assert.deepEqual((done.stages[0]?.output as { outputs: object }).outputs, { attempt: '2' });
  const ledger = await store.store.reads.readLedger(run.id);
  assert.deepEqual(ledger.map((e) => [e.stage, e.kind]), [['long', 'stage']], 'the stage is recorded once');
});
