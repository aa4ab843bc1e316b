/**
 * Pipelines declared in kiln.yaml: the two configurations of issue 11 (as shipped in examples/)
 * load into command-stage specs; every field resolves; every kind of mistake is reported at its
 * line and column, all of them at once.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { loadConfig, type LoadConfigOptions } from '../../src/config/load.ts';
import { ConfigError, type ConfigIssue } from '../../src/core/errors.ts';
import { definePipeline } from '../../src/core/pipeline/define-pipeline.ts';

const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));
const demo = definePipeline({ name: 'demo.sleep', version: 1, stages: [{ name: 'prepare', handler: () => null }] });

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kiln-config-commands-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function load(file: string, options: Partial<LoadConfigOptions> = {}) {
  return loadConfig({ cwd: dir, env: {}, pipelines: [demo], file, ...options });
}

function writeYaml(lines: readonly string[]): string {
  const path = join(dir, 'kiln.yaml');
  writeFileSync(path, lines.join('\n'));
  return path;
}

function issuesOf(fn: () => unknown): readonly ConfigIssue[] {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    return err.issues;
  }
  assert.fail('expected a ConfigError');
}

describe('pipelines declared in kiln.yaml', () => {
  test('the first configuration of the issue loads: queue, local cache, retries and the worker defaults', () => {
    const config = load(join(EXAMPLES, 'worker-pipeline/kiln.yaml'));
    const [spec] = config.commandPipelines;
    assert.equal(config.commandPipelines.length, 1);
    assert.equal(spec?.name, 'worker-pipeline');
    assert.deepEqual(spec?.stages.map((s) => s.name), ['fetch', 'process', 'finalize']);
    const [fetch, process, finalize] = spec?.stages ?? [];
    assert.equal(fetch?.queue, 'job-queue');
    assert.deepEqual(fetch?.run.argv, [join(EXAMPLES, 'worker-pipeline/fetch.sh')]);
    assert.deepEqual(process?.cache, { key: null, ttlMs: 3_600_000, staleMs: 0, local: 'fast-storage' });
    assert.equal(process?.policy.maxAttempts, 4, 'retry: 3 is three retries after the first attempt');
    assert.deepEqual(finalize?.policy, { timeoutMs: 30_000, concurrency: 8 }, 'worker.timeout and worker.concurrency are the defaults');
    assert.equal(finalize?.timeoutMs, 30_000);
    assert.deepEqual(config.worker.lock, { provider: 'sqlite', ttlMs: 45_000 });
  });

  test('the second configuration loads as the pipeline "default" with its rollbacks', () => {
    const config = load(join(EXAMPLES, 'temp-data/kiln.yaml'));
    const [spec] = config.commandPipelines;
    assert.equal(spec?.name, 'default');
    assert.deepEqual(
      spec?.stages.map((s) => [s.name, s.run.argv[0], s.rollback?.argv[0]]),
      [
        ['stage-a', join(EXAMPLES, 'temp-data/insert-temp-data'), join(EXAMPLES, 'temp-data/delete-temp-data')],
        ['stage-b', join(EXAMPLES, 'temp-data/finalize'), join(EXAMPLES, 'temp-data/unset-finalized')],
      ],
    );
    assert.equal(spec?.inputs, null);
  });

  test('the issue text itself (only run added) says what kiln does instead of db: and which lock providers exist', () => {
    const file = writeYaml([
      'pipeline:',
      '  name: worker-pipeline',
      '  stages:',
      '    - { name: fetch, queue: job-queue, run: ./f }',
      '    - { name: finalize, db: postgres, run: ./g }',
      'worker:',
      '  lock:',
      '    provider: redis',
    ]);
    const issues = issuesOf(() => load(file));
    assert.deepEqual(issues.map((i) => [i.path, i.line, i.column]), [
      ['pipeline.stages.1.db', 5, 25],
      ['worker.lock.provider', 8, 15],
    ]);
    assert.match(issues[0]?.message ?? '', /unknown key "db".*one store of kiln/);
    assert.match(issues[1]?.message ?? '', /lock provider redis is not the selected store \(sqlite\).*select the Redis store with store\.url, KILN_STORE or --store/);
  });

  test('every field resolves: argv text split without a shell, env as text, cwd, retry, exit codes, cache key, lock, publish', () => {
    const file = writeYaml([
      'pipelines:',
      '  media.render:',
      '    inputs: { src: string, size: { type: integer, default: 64 }, note: { type: string, required: false } }',
      '    stages:',
      '      - name: fetch',
      '        run: [/bin/echo, "{{input.src}}"]',
      '      - name: render',
      `        run: ./render.sh "--in={{stage.fetch.artifacts.page.html}}" '{{input.size}}'`,
      '        rollback: ./unrender.sh {{stage.render.outputs.id}}',
      '        env: { LEVEL: 3, FLAG: true, SRC: "{{input.src}}" }',
      '        cwd: ./work',
      '        retry: { retries: 2, backoff: 2s, maxBackoff: 1m }',
      '        timeout: 90s',
      '        lease: 20s',
      '        priority: -1',
      '        exitCodes: { 3: permanent, signal: intervention }',
      '        cache: { key: ["{{input.src}}", stage.fetch.outputs.etag], ttl: 10m, staleWhileRevalidate: 1m, local: true }',
      '        lock: { key: "render:{{input.src}}", ttl: 45s }',
      '        publish: [{ file: out.png, profile: thumb, subject: "{{input.src}}" }]',
      '  demo.sleep:',
      '    stages: { prepare: { maxAttempts: 2 } }',
    ]);
    const config = load(file);
    assert.deepEqual(config.policies, { 'demo.sleep': { prepare: { maxAttempts: 2 } } }, 'a mapping of stages still overrides a registered pipeline');
    const render = config.commandPipelines[0]?.stages[1];
    assert.deepEqual(render?.run, {
      argv: [join(dir, 'render.sh'), '--in={{stage.fetch.artifacts.page.html}}', '{{input.size}}'],
      shell: false,
      env: { LEVEL: '3', FLAG: 'true', SRC: '{{input.src}}' },
      cwd: join(dir, 'work'),
    });
    assert.deepEqual(render?.rollback?.argv, [join(dir, 'unrender.sh'), '{{stage.render.outputs.id}}']);
    assert.deepEqual(render?.policy, { maxAttempts: 3, backoff: { baseMs: 2_000, capMs: 60_000 }, timeoutMs: 90_000, leaseMs: 20_000, priority: -1 });
    assert.equal(render?.exitCodes['3'], 'permanent');
    assert.equal(render?.exitCodes['signal'], 'intervention');
    assert.equal(render?.exitCodes['75'], 'transient');
    assert.deepEqual(render?.cache, { key: ['input.src', 'stage.fetch.outputs.etag'], ttlMs: 600_000, staleMs: 60_000, local: 'media.render.render' });
    assert.deepEqual(render?.lock, { key: 'render:{{input.src}}', ttlMs: 45_000 });
    assert.deepEqual(render?.publish, [{ file: 'out.png', profile: 'thumb', subject: '{{input.src}}' }]);
    assert.deepEqual(config.commandPipelines[0]?.inputs, {
      src: { type: 'string', required: true },
      size: { type: 'integer', required: false, default: 64 },
      note: { type: 'string', required: false },
    });
  });

  test('five different mistakes are all reported, each with its line and column', () => {
    const file = writeYaml([
      'pipeline:', //                                                  1
      '  inputs: { url: string }', //                                  2
      '  stages:', //                                                  3
      '    - name: fetch', //                                          4
      '      run: [/bin/echo, "{{input.uri}}"]', //                    5  unknown input
      '      tiemout: 5s', //                                          6  unknown field
      '    - name: render', //                                         7
      '      run: no-such-program-kiln-test {{stage.fecth.outputs.x}}', // 8  not on PATH + unknown stage
      '      lease: 5 minutes', //                                     9  bad duration
    ]);
    const issues = issuesOf(() => load(file, { findProgram: (program) => program.startsWith('/') }));
    assert.deepEqual(
      issues.map((i) => [i.path, i.line, i.column]),
      [
        ['pipeline.stages.0.run.1', 5, 24],
        ['pipeline.stages.0.tiemout', 6, 7],
        ['pipeline.stages.1.run', 8, 12],
        ['pipeline.stages.1.run', 8, 12],
        ['pipeline.stages.1.lease', 9, 14],
      ],
    );
    const messages = issues.map((i) => i.message);
    assert.match(messages[0] ?? '', /unknown input "uri" \(declared: url\)/);
    assert.match(messages[1] ?? '', /unknown key "tiemout"/);
    assert.ok(messages.some((m) => /command not found on PATH: no-such-program-kiln-test/.test(m)));
    assert.ok(messages.some((m) => /unknown stage "fecth"/.test(m)));
    assert.match(messages[4] ?? '', /duration string/);
  });

  test('programs and shell scripts are never templated; lock keys name the input only; names and queues never clash', () => {
    const file = writeYaml([
      'pipelines:',
      '  demo.sleep:',
      '    stages:',
      '      - { name: a, run: "{{input.tool}} x" }',
      '  other:',
      '    inputs: { x: string }',
      '    stages:',
      '      - { name: a, run: "echo {{input.x}}", shell: true, queue: demo.sleep.prepare }',
      '      - { name: b, run: /bin/true, lock: { key: "k:{{stage.a.outputs.y}}" } }',
    ]);
    const messages = issuesOf(() => load(file)).map((i) => `${i.path}: ${i.message}`);
    assert.ok(messages.some((m) => /^pipelines\.demo\.sleep: pipeline demo\.sleep is already registered/.test(m)), messages.join('\n'));
    assert.ok(messages.some((m) => /the program to run cannot be a template/.test(m)), messages.join('\n'));
    assert.ok(messages.some((m) => /templates are not filled into shell scripts/.test(m)), messages.join('\n'));
    assert.ok(messages.some((m) => /queue demo\.sleep\.prepare is already the queue of stage demo\.sleep\.prepare/.test(m)), messages.join('\n'));
    assert.ok(messages.some((m) => /a lock key may name input/.test(m)), messages.join('\n'));
  });
});
