/**
 * `kiln validate` as a user runs it: a kiln.yaml with five different mistakes prints all five,
 * each as `file:line:column: field: message`, and exits with CONFIG_INVALID's exit code (2);
 * a good file prints its declared pipelines and exits 0. Nothing is started: no store is created.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { cleanEnv, runKiln } from './kiln-process.ts';

const FIVE_MISTAKES = [
  'pipeline:', //                                                          1
  '  name: media', //                                                      2
  '  inputs: { url: string }', //                                          3
  '  stages:', //                                                          4
  '    - name: fetch', //                                                  5
  '      run: [/bin/echo, "{{input.uri}}"]', //                            6  unknown input
  '      retires: 3', //                                                   7  unknown field
  '    - name: render', //                                                 8
  '      run: kiln-no-such-tool --from {{stage.fecth.outputs.path}}', //   9  not on PATH; unknown stage
  '      timeout: ten seconds', //                                         10 bad duration
].join('\n');

const GOOD = ['pipeline:', '  name: media', '  stages:', '    - { name: fetch, run: /bin/echo hi }', '    - { name: render, run: [/bin/true], timeout: 10s }'].join('\n');

test('kiln validate prints every mistake with line and column and exits 2; a good file exits 0', { timeout: 60_000 }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-validate-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'bad.yaml'), FIVE_MISTAKES);
  await writeFile(join(dir, 'kiln.yaml'), GOOD);

  const bad = await runKiln(['validate', 'bad.yaml'], dir, cleanEnv(), 30_000);
  assert.equal(bad.code, 2, bad.stderr);
  assert.deepEqual(bad.stdout.trim().split('\n'), [
    'bad.yaml:6:24: pipeline.stages.0.run.1: unknown input "uri" (declared: url)',
    'bad.yaml:7:7: pipeline.stages.0.retires: unknown key "retires" (allowed: name, run, rollback, shell, env, cwd, queue, retry, timeout, lease, concurrency, priority, cache, lock, exitCodes, publish)',
    'bad.yaml:9:12: pipeline.stages.1.run: command not found on PATH: kiln-no-such-tool',
    'bad.yaml:9:12: pipeline.stages.1.run: unknown stage "fecth" (stages: fetch, render)',
    'bad.yaml:10:16: pipeline.stages.1.timeout: must be a non-negative integer of milliseconds or a duration string like "250ms", "2s", "1m", "1h", got "ten seconds"',
  ]);
  assert.match(bad.stderr, /^kiln: CONFIG_INVALID: 5 problems$/m);

  const good = await runKiln(['validate'], dir, cleanEnv(), 30_000);
  assert.equal(good.code, 0, good.stderr);
  assert.deepEqual(good.stdout.trim().split('\n'), ['kiln.yaml: ok', '  pipeline media v1: fetch -> render']);
  assert.equal(existsSync(join(dir, 'kiln.db')), false, 'validate opened no store');
});
