/**
 * The crash-point test hook (src/engine/crash-points.ts): a plan is parsed strictly, and an armed
 * point fires on its planned pass only, writing its line before the kill; without a plan (this
 * test process has none) `crashPoint` does nothing. The kills themselves are exercised by the
 * chaos harness (test/e2e/worker-chaos.test.ts), where real workers die at each point.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { armCrashPoint, crashPlanned, crashPoint, parseCrashPlan } from '../../src/engine/crash-points.ts';
import { createPrng } from '../support/simulation/prng.ts';
import { crashSchedule } from '../support/chaos/harness.ts';

test('a crash plan is parsed strictly: a known point, a pass >= 1, a file', () => {
  assert.deepEqual(parseCrashPlan('{"point":"after-commit","pass":3,"file":"/tmp/h"}'), { point: 'after-commit', pass: 3, file: '/tmp/h' });
  assert.throws(() => parseCrashPlan('{"point":"before-lunch","pass":1,"file":"/tmp/h"}'), /point must be one of/);
  assert.throws(() => parseCrashPlan('{"point":"mid-handler","pass":0,"file":"/tmp/h"}'), /pass must be an integer >= 1/);
  assert.throws(() => parseCrashPlan('{"point":"mid-handler","pass":1.5,"file":"/tmp/h"}'), /pass must be an integer >= 1/);
  assert.throws(() => parseCrashPlan('{"point":"mid-handler","pass":1}'), /file must be a path/);
  assert.throws(() => parseCrashPlan('null'), /must be a JSON object/);
});

test('an armed point fires on its planned pass only, its line written before the kill', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-crash-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'hits');
  const fired: string[] = [];
  const point = armCrashPoint({ point: 'after-commit', pass: 3, file }, () => fired.push('kill'));
  for (const name of ['after-commit', 'mid-handler', 'after-commit', 'after-claim'] as const) point(name);
  assert.deepEqual(fired, [], 'two passes of after-commit: not yet');
  point('after-commit');
  assert.deepEqual(fired, ['kill']);
  assert.equal(await readFile(file, 'utf8'), `after-commit 3 ${process.pid}\n`);
  point('after-commit');
  assert.deepEqual(fired, ['kill'], 'only the planned pass fires');
});

test('without a plan in the environment, crashPoint is a no-op', () => {
  assert.equal(crashPlanned, false);
  for (const name of ['after-claim', 'mid-handler', 'after-artifact-write', 'after-commit', 'mid-rollback'] as const) crashPoint(name);
});

test('the harness schedule holds perPoint plans of each point, passes in range, the same for the same seed', () => {
  const a = crashSchedule(createPrng(7), 20, 3);
  assert.equal(a.length, 100);
  for (const point of ['after-claim', 'mid-handler', 'after-artifact-write', 'after-commit', 'mid-rollback']) assert.equal(a.filter((p) => p.point === point).length, 20);
  assert.ok(a.every((p) => p.pass >= 1 && p.pass <= 3));
  assert.deepEqual(crashSchedule(createPrng(7), 20, 3), a);
  assert.notDeepEqual(crashSchedule(createPrng(8), 20, 3), a);
});
