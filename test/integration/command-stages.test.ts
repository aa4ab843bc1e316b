/**
 * Command stages in one process over a SQLite store and the filesystem artifact store, with real
 * shell scripts (test/fixtures/commands/): run input values reach the command as literal
 * arguments, files and `::output` values flow to the next stage, exit codes map to error classes
 * with the end of stderr in the error, a cached stage runs once per key (the second time from the
 * worker's own LRU), a timeout kills the command's whole process group, and a published subject
 * rendered from the input stays within the run's tenant.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { createFsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import { createCommandPipeline } from '../../src/commands/command-pipeline.ts';
import { loadConfig } from '../../src/config/load.ts';
import type { JsonValue } from '../../src/core/model.ts';
import type { RunDetail } from '../../src/core/ports/reads.ts';
import { createKiln } from '../../src/engine/create-kiln.ts';
import type { Kiln, Worker } from '../../src/engine/kiln-types.ts';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { createRecorder, type Recorded } from '../support/engine-harness.ts';
import { eventually, isGone, processesInGroup } from '../support/processes.ts';

const FIXTURES = fileURLToPath(new URL('../fixtures/commands/', import.meta.url));

/** The pipelines of this file, declared in kiln.yaml as a user would. */
function kilnYaml(dir: string): string {
  const f = (name: string): string => join(FIXTURES, name);
  return `
worker:
  workDir: ${dir}/work
pipelines:
  t.args:
    inputs: { value: string }
    stages:
      - name: record
        run: [${f('record.sh')}, "{{input.value}}"]
  t.flow:
    stages:
      - name: one
        run: ${f('emit.sh')}
      - name: two
        run: ${f('record.sh')} "{{stage.one.outputs.greeting}}" "{{stage.one.artifacts.data/hello.txt}}"
  t.exit:
    inputs: { code: string }
    stages:
      - name: fail
        run: [${f('exit-with.sh')}, "{{input.code}}"]
        retry: 0
        exitCodes: { 3: permanent }
  t.cached:
    inputs: { value: string }
    stages:
      - name: compute
        run: [${f('count.sh')}, "{{input.value}}"]
        env: { COUNTER_FILE: ${dir}/counter }
        cache: local
  t.publish:
    inputs: { value: string }
    stages:
      - name: record
        run: [${f('record.sh')}, "{{input.value}}"]
        publish: { file: args.bin, profile: raw, subject: "{{input.value}}" }
  t.timeout:
    stages:
      - name: hang
        run: ${f('hang-group.sh')}
        env: { MARKER_FILE: ${dir}/marker }
        timeout: 1s
        retry: 0
`;
}

describe('command stages (SQLite, real commands)', () => {
  let dir: string;
  let kiln: Kiln;
  let worker: Worker;
  let recorded: Recorded;
  let close: () => Promise<void>;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kiln-commands-'));
    await writeFile(join(dir, 'kiln.yaml'), kilnYaml(dir));
    const config = loadConfig({ file: join(dir, 'kiln.yaml'), cwd: dir, env: {}, pipelines: [] });
    const store = createSqliteStore({ path: join(dir, 'kiln.db') });
    await store.migrate();
    const recorder = createRecorder();
    recorded = recorder.recorded;
    kiln = createKiln({
      store,
      artifacts: createFsArtifactStore({ root: join(dir, 'artifacts') }),
      pipelines: config.commandPipelines.map(createCommandPipeline),
      observer: recorder.observer,
    });
    worker = kiln.createWorker({ pollMs: 20 });
    worker.start();
    close = async () => {
      await worker.stop(1_000);
      await store.close();
    };
  });

  after(async () => {
    await close();
    await rm(dir, { recursive: true, force: true });
  });

  async function runToEnd(pipeline: string, input: JsonValue): Promise<RunDetail> {
    const { run } = await kiln.submit(pipeline, input);
    const detail = await kiln.waitForRun(run.id, { timeoutMs: 20_000 });
    assert.notEqual(detail.run.status, 'running', `run ${run.id} ended`);
    return detail;
  }

  /** A file the stage left in its output dir, read back from the artifact store. */
  async function artifact(detail: RunDetail, stage: string, file: string): Promise<Buffer> {
    const output = detail.stages.find((s) => s.stage === stage)?.output as { artifacts: Record<string, { ref: string }> };
    const ref = output.artifacts[file]?.ref;
    assert.ok(ref, `stage ${stage} stored ${file}`);
    return Buffer.from(await kiln.artifacts.get(ref));
  }

  test('run input values with shell syntax reach the command as one literal argument each and run nothing', async () => {
    const pwned = join(dir, 'pwned');
    for (const value of [`x; touch ${pwned}`, '$(id)', '`id`', `a' "b" \\c | touch ${pwned} && echo`]) {
      const detail = await runToEnd('t.args', { value });
      assert.equal(detail.run.status, 'succeeded', JSON.stringify(detail.run.error));
      assert.deepEqual((await artifact(detail, 'record', 'args.bin')).toString().split('\0').slice(0, -1), [value]);
    }
    assert.equal(existsSync(pwned), false, 'nothing was run by a shell');
  });

  test("files and ::output values of a stage are the next stage's arguments and files; each attempt has its own directory and KILN_ variables", async () => {
    const detail = await runToEnd('t.flow', {});
    assert.equal(detail.run.status, 'succeeded', JSON.stringify(detail.run.error));
    const one = detail.stages[0]?.output as { outputs: Record<string, string>; artifacts: Record<string, { mediaType: string }> };
    assert.deepEqual(one.outputs, { greeting: 'hi there' });
    assert.equal(one.artifacts['data/hello.txt']?.mediaType, 'text/plain');
    const args = (await artifact(detail, 'two', 'args.bin')).toString().split('\0').slice(0, -1);
    assert.equal(args[0], 'hi there');
    assert.match(args[1] ?? '', /\/in\/one\/data\/hello\.txt$/);
    assert.equal((await artifact(detail, 'two', 'seen.txt')).toString(), 'hello from one\n');
    const env = Object.fromEntries(
      (await artifact(detail, 'two', 'env.txt')).toString().trim().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    assert.equal(env['KILN_RUN_ID'], detail.run.id);
    assert.equal(env['KILN_STAGE'], 'two');
    assert.equal(env['KILN_ATTEMPT'], '1');
    assert.equal(env['KILN_JOB_KIND'], 'stage');
    assert.equal(env['KILN_LOCK_FENCE'], undefined, 'no lock, no fence');
    assert.equal(env['KILN_OUTPUT_DIR'], `${env['KILN_WORK_DIR']}/out`);
    assert.equal((await artifact(detail, 'two', 'pwd.txt')).toString().trim(), env['KILN_WORK_DIR']);
    const input = JSON.parse((await artifact(detail, 'two', 'input.json')).toString()) as { run: { id: string }; stages: Record<string, { outputs: object }> };
    assert.equal(input.run.id, detail.run.id);
    assert.deepEqual(input.stages['one']?.outputs, { greeting: 'hi there' });
    assert.deepEqual(await readdir(join(dir, 'work')), [], 'attempt directories are removed');
  });

  test('a subject rendered from the input stays within the run\'s tenant: a run of tenant B naming tenant A\'s subject publishes its own', async () => {
    const runAs = async (value: string, tenant?: string): Promise<void> => {
      const { run } = await kiln.submit('t.publish', { value }, tenant === undefined ? {} : { tenant });
      assert.equal((await kiln.waitForRun(run.id, { timeoutMs: 20_000 })).run.status, 'succeeded');
    };
    await runAs('tenant-a/logo', 'tenant-b');
    assert.deepEqual(await kiln.listPublications('tenant-a/logo'), [], 'nothing published into tenant A\'s subject');
    assert.deepEqual((await kiln.listPublications('tenant-b/tenant-a/logo')).map((p) => p.profile), ['raw'], 'tenant B\'s own subject');
    await runAs('tenant-b/own', 'tenant-b');
    assert.equal((await kiln.listPublications('tenant-b/own')).length, 1, 'a subject already of the tenant stays as it is');
    await runAs('plain');
    assert.equal((await kiln.listPublications('plain')).length, 1, 'a run without a tenant publishes the subject as rendered');
  });

  test('exit codes map to error classes (defaults and the stage own), with the last lines of stderr in the error', async () => {
    const cases: [string, string, string][] = [
      ['75', 'transient', 'dead_lettered'],
      ['1', 'transient', 'dead_lettered'],
      ['65', 'permanent', 'failed'],
      ['64', 'permanent', 'failed'],
      ['3', 'permanent', 'failed'],
      ['78', 'intervention', 'parked'],
      ['signal', 'transient', 'dead_lettered'],
    ];
    for (const [code, errorClass, status] of cases) {
      const detail = await runToEnd('t.exit', { code });
      assert.equal(detail.run.status, status, `exit ${code}`);
      const error = detail.stages[0]?.error;
      assert.equal(error?.class, errorClass, `exit ${code}`);
      assert.equal(error?.code, 'COMMAND_FAILED');
      assert.match(error?.message ?? '', code === 'signal' ? /was killed by SIGTERM/ : new RegExp(`exited with code ${code}`));
      assert.match(error?.message ?? '', /stderr line 6\nstderr line 7[\s\S]*stderr line 15$/);
      assert.doesNotMatch(error?.message ?? '', /stderr line 5\n/, 'only the last lines of stderr');
    }
  });

  test('a cached stage runs its command once per key; a repeat in this worker is a local (LRU) hit', async () => {
    const first = await runToEnd('t.cached', { value: 'v' });
    const second = await runToEnd('t.cached', { value: 'v' });
    const other = await runToEnd('t.cached', { value: 'w' });
    for (const d of [first, second, other]) assert.equal(d.run.status, 'succeeded', JSON.stringify(d.run.error));
    assert.equal(readFileSync(join(dir, 'counter'), 'utf8'), 'run\nrun\n', 'one run per distinct key');
    assert.deepEqual(second.stages[0]?.output, first.stages[0]?.output);
    assert.deepEqual(recorded.localCacheRequests, ['t.cached.compute:miss', 't.cached.compute:hit', 't.cached.compute:miss']);
    assert.deepEqual(recorded.cacheRequests, ['t.cached.compute:miss', 't.cached.compute:miss'], 'the repeat never reached the store');
  });

  test('a command past its timeout is killed with its whole process group', async () => {
    const detail = await runToEnd('t.timeout', {});
    assert.equal(detail.run.status, 'dead_lettered');
    assert.equal(detail.stages[0]?.error?.code, 'STAGE_TIMEOUT');
    const [pgid = 0, ...pids] = readFileSync(join(dir, 'marker'), 'utf8').trim().split(' ').map(Number);
    assert.ok(await eventually(() => pids.every(isGone) && processesInGroup(pgid).length === 0, 5_000), `group ${pgid} is empty`);
  });
});
