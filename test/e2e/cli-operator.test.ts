/**
 * Operator commands as real processes working straight on a store file (no server): submit,
 * inspect, cancel, queue controls, errors as `kiln: <code>: <message>` with the table's exit
 * codes, and `--pipelines` registering a user's pipeline in both `kiln worker` and `kiln submit`.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { ExitCode } from '../../src/cli/exit-codes.ts';
import { cleanEnv, KILN_INDEX, killIfRunning, runKiln, spawnKiln } from './kiln-process.ts';

/**
 * Bounds a test whose child hangs (each child is also bounded by runKiln). Not a speed check:
 * every kiln process costs ~1.5 s to start here (node + tsx), the operator test starts 11 of them,
 * in 9 steps one after another (15-21 s alone), and under the suite's load it once took over 30 s.
 */
const E2E_TIMEOUT_MS = 90_000;

async function tempDir(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-cli-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('operator commands submit, list, show, pause, drain and cancel runs on the store file', { timeout: E2E_TIMEOUT_MS }, async (t) => {
  const dir = await tempDir(t);
  const kiln = (...args: string[]) => runKiln([...args, '--db', 'ops.db'], dir);

  const migrated = await kiln('migrate');
  assert.equal(migrated.code, 0, migrated.stderr);
  assert.match(migrated.stdout, /schema version \d+/);

  const submitted = await kiln('submit', 'demo.sleep', '{"delayMs":0}', '--idempotency-key', 'cli-1');
  assert.equal(submitted.code, 0, submitted.stderr);
  const runId = submitted.stdout.trim();
  assert.match(runId, /^run_/);
  const [listed, shown, paused] = await Promise.all([kiln('runs', '--json'), kiln('run', runId), kiln('pause', 'demo.sleep.prepare')]);
  assert.deepEqual(
    (JSON.parse(listed.stdout) as { id: string; status: string }[]).map((r) => [r.id, r.status]),
    [[runId, 'queued']],
  );
  assert.match(shown.stdout, new RegExp(`run\\s+${runId}`));
  assert.match(shown.stdout, /^prepare\s+pending\s+0/m);
  assert.equal(paused.stdout.trim(), 'queue demo.sleep.prepare paused');

  const queues = JSON.parse((await kiln('queues', '--json')).stdout) as { queue: string; paused: boolean; ready: number }[];
  const prepare = queues.find((q) => q.queue === 'demo.sleep.prepare');
  assert.equal(prepare?.paused, true);
  assert.equal(prepare?.ready, 1);

  const cancelled = await kiln('cancel', runId, '--reason', 'changed my mind');
  assert.equal(cancelled.stdout.trim(), `run ${runId} cancelled`);
  const again = await kiln('cancel', runId);
  assert.equal(again.code, ExitCode.conflict);
  assert.match(again.stderr, /^kiln: INVALID_TRANSITION: /);
  assert.equal(again.stdout, '');

  const drained = await kiln('drain', 'demo.sleep.prepare');
  assert.equal(drained.stdout.trim(), 'queue demo.sleep.prepare drained: 0 jobs removed');

  // A queue no registered pipeline has is refused, and nothing is created for it.
  const made = await kiln('pause', 'made.up.queue');
  assert.equal(made.code, ExitCode.notFound, made.stderr);
  assert.match(made.stderr, /^kiln: UNKNOWN_QUEUE: /);
  const after = JSON.parse((await kiln('queues', '--json')).stdout) as { queue: string }[];
  assert.equal(after.find((q) => q.queue === 'made.up.queue'), undefined);
});

test('errors print kiln: <code>: <message> and exit with the code table', { timeout: E2E_TIMEOUT_MS }, async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'bad.yaml'), 'http:\n  port: not-a-number\n');
  const [missing, unknown, badJson, badConfig, usage] = await Promise.all([
    runKiln(['run', 'run_nope', '--db', 'e.db'], dir),
    runKiln(['submit', 'no.such', '--db', 'e.db'], dir),
    runKiln(['submit', 'demo.sleep', '{oops', '--db', 'e.db'], dir),
    runKiln(['runs', '--config', 'bad.yaml'], dir),
    runKiln(['runs', '--status', 'bogus', '--db', 'e.db'], dir),
  ]);
  assert.equal(missing.code, ExitCode.notFound);
  assert.match(missing.stderr, /^kiln: NOT_FOUND: run run_nope not found/);
  assert.equal(unknown.code, ExitCode.notFound);
  assert.match(unknown.stderr, /^kiln: UNKNOWN_PIPELINE: /);
  assert.equal(badJson.code, ExitCode.usage);
  assert.match(badJson.stderr, /^kiln: INVALID_JSON: input is not valid JSON/);
  assert.equal(badConfig.code, ExitCode.usage);
  assert.match(badConfig.stderr, /^kiln: CONFIG_INVALID: .*\n.*bad\.yaml:2:9 http\.port/);
  assert.equal(usage.code, ExitCode.usage);
  assert.match(usage.stderr, /option '--status <status>' argument 'bogus' is invalid/);
});

test('--pipelines registers a user pipeline in kiln worker and kiln submit --wait sees it succeed', { timeout: E2E_TIMEOUT_MS }, async (t) => {
  const dir = await tempDir(t);
  await writeFile(
    join(dir, 'shout.mts'),
    `import { definePipeline } from ${JSON.stringify(pathToFileURL(KILN_INDEX).href)};
export default definePipeline({
  name: 'test.shout',
  version: 1,
  stages: [{ name: 'upper', handler: (ctx) => ({ text: String((ctx.input as { text: string }).text).toUpperCase() }) }],
});
`,
  );
  const env = cleanEnv({ KILN_PIPELINES: './shout.mts', KILN_DB: join(dir, 'p.db'), KILN_LOG_LEVEL: 'warn' });
  const worker = spawnKiln(['worker', '--worker-id', 'shouter'], dir, env);
  t.after(async () => {
    killIfRunning(worker);
    await worker.exited;
  });
  const result = await runKiln(['submit', 'test.shout', '{"text":"hi"}', '--wait', '15000', '--json'], dir, env);
  assert.equal(result.code, 0, `${result.stderr}\n${worker.output()}`);
  const run = JSON.parse(result.stdout) as { status: string; stages: { stage: string; output: unknown }[] };
  assert.equal(run.status, 'succeeded');
  assert.deepEqual(run.stages[0]?.output, { text: 'HI' });
  worker.child.kill('SIGTERM');
  assert.deepEqual(await worker.exited, { code: 0, signal: null });
});
