/**
 * The two configurations of issue 11, as shipped in examples/, run end to end as pipelines
 * declared in kiln.yaml alone, with their real shell scripts, by the `kiln` command (`kiln submit
 * --worker`: a run and a worker in one process) on SQLite and on PostgreSQL. The second one also
 * fails for good at stage-b: its scripts record that the rollbacks ran in reverse order, b then a.
 * The image example runs by the one command its README gives, in a copy of its folder.
 */
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import type { RunDetail } from '../../src/core/ports/reads.ts';
import { cleanEnv, runKiln } from './kiln-process.ts';
import { openE2eScene, qrE2eStoreCases, type QrE2eStoreCase } from './qr-stores.ts';

const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));
/** A spawned kiln loads TypeScript first: seconds on a busy 2-core machine. */
const COMMAND_TIMEOUT_MS = 60_000;

/** `kiln submit <pipeline> <input> --worker --json` with `config`; returns the run's final detail (JSON view). */
async function submitAndRun(dir: string, store: string[], env: NodeJS.ProcessEnv, config: string, pipeline: string, input: object): Promise<RunDetail['run'] & { stages: RunDetail['stages'] }> {
  const args = [...store, '--config', config, 'submit', pipeline, JSON.stringify(input), '--worker', '--wait', '45000', '--json'];
  const result = await runKiln(args, dir, env, COMMAND_TIMEOUT_MS);
  assert.ok(result.stdout.startsWith('{'), `kiln submit printed the run\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`);
  return JSON.parse(result.stdout) as RunDetail['run'] & { stages: RunDetail['stages'] };
}

const { sqlite, postgres } = qrE2eStoreCases();

for (const storeCase of [sqlite, postgres] as QrE2eStoreCase[]) describe(`${storeCase.name}: the issue's configurations as YAML-only pipelines`, { skip: storeCase.skip }, () => {
  test('worker-pipeline: fetch (on its own queue) -> process (cached) -> finalize, files and outputs handed along', { timeout: 120_000 }, async (t) => {
    const { dir, store } = await openE2eScene(t, storeCase, 'kiln-cmd-e2e-');
    const env = cleanEnv({ ...store.env, KILN_LOG_LEVEL: 'warn' });
    const run = await submitAndRun(dir, store.args, env, join(EXAMPLES, 'worker-pipeline/kiln.yaml'), 'worker-pipeline', { lines: 100 });
    assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
    assert.deepEqual(run.stages.map((s) => [s.stage, s.status, s.attempts]), [
      ['fetch', 'succeeded', 1],
      ['process', 'succeeded', 1],
      ['finalize', 'succeeded', 1],
    ]);
    const outputs = run.stages.map((s) => (s.output as { outputs: Record<string, string> }).outputs);
    assert.deepEqual(outputs, [{ lines: '100' }, { sum: '5050' }, { result: 'sum of the fetched numbers is 5050' }]);
    assert.deepEqual((await store.store.reads.readLedger(run.id)).map((e) => e.stage), ['fetch', 'process', 'finalize'], 'each stage recorded once');
  });

  test('default (stage-a -> stage-b): succeeds; then stage-b failing for good runs rollback b, then rollback a', { timeout: 120_000 }, async (t) => {
    const { dir, store } = await openE2eScene(t, storeCase, 'kiln-cmd-e2e-');
    const dataDir = join(dir, 'temp-data');
    const config = join(EXAMPLES, 'temp-data/kiln.yaml');
    const env = cleanEnv({ ...store.env, KILN_LOG_LEVEL: 'warn', TEMP_DATA_DIR: dataDir });
    const ok = await submitAndRun(dir, store.args, env, config, 'default', {});
    assert.equal(ok.status, 'succeeded', JSON.stringify(ok.error));

    const failed = await submitAndRun(dir, store.args, { ...env, TEMP_DATA_FAIL: 'finalize' }, config, 'default', {});
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error?.code, 'COMMAND_FAILED');
    assert.match(failed.error?.message ?? '', /exited with code 65: finalize: refusing to finalize/);
    assert.deepEqual(failed.stages.map((s) => [s.stage, s.status, s.rollbackStatus]), [
      ['stage-a', 'succeeded', 'succeeded'],
      ['stage-b', 'failed', 'succeeded'],
    ]);

    // The commands themselves recorded what ran, in order.
    const log = (await readFile(join(dataDir, 'log'), 'utf8')).trim().split('\n');
    assert.deepEqual(log.filter((l) => l.endsWith(ok.id)).map((l) => l.split(' ')[0]), ['insert-temp-data', 'finalize']);
    assert.deepEqual(log.filter((l) => l.endsWith(failed.id)).map((l) => l.split(' ')[0]), ['insert-temp-data', 'finalize', 'unset-finalized', 'delete-temp-data']);
  });
});

test('the image example: converted, thumbnailed and published by the one command of the README', { timeout: 120_000 }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-image-example-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const example = join(dir, 'image');
  await cp(join(EXAMPLES, 'image'), example, { recursive: true });
  // Its converters import sharp, found from their own folder as in the repository.
  await symlink(fileURLToPath(new URL('../../node_modules', import.meta.url)), join(dir, 'node_modules'));
  const input = JSON.stringify({ source: 'kiln.svg', name: 'kiln' });
  const result = await runKiln(['submit', 'image', input, '--worker', '--log-level', 'warn'], example, cleanEnv(), COMMAND_TIMEOUT_MS);
  assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
  assert.match(result.stdout, /status\s+succeeded/);
  const png = await readFile(join(example, 'out/kiln.png'));
  assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [128, 96], 'a 128 px thumbnail of the 512x384 source');
  const got = await runKiln(['assets', 'get', 'kiln', 'thumb', '-o', 'published.png', '--log-level', 'warn'], example, cleanEnv(), COMMAND_TIMEOUT_MS);
  assert.equal(got.code, 0, got.stderr);
  assert.deepEqual(await readFile(join(example, 'published.png')), png, 'the publication is the same thumbnail');
});
