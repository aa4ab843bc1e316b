/**
 * `kiln doctor` and store selection on SQLite, as real processes: a migrated store passes (the
 * clock check does not apply), a missing file fails without being created, and naming two stores
 * at once is a configuration error.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ExitCode } from '../../src/cli/exit-codes.ts';
import { runKiln } from './kiln-process.ts';

const E2E_TIMEOUT_MS = 30_000;

async function tempDir(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-doctor-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('doctor passes on a migrated SQLite store and says the clock check does not apply', { timeout: E2E_TIMEOUT_MS }, async (t) => {
  const dir = await tempDir(t);
  const migrated = await runKiln(['migrate', '--store', 'sqlite:./data/k.db'], dir);
  assert.equal(migrated.code, 0, migrated.stderr);
  assert.match(migrated.stdout, new RegExp(`^store: sqlite ${join(dir, 'data', 'k.db')}$`, 'm'));

  const doctor = await runKiln(['doctor', '--db', 'data/k.db', '--json'], dir);
  assert.equal(doctor.code, ExitCode.ok, doctor.stdout + doctor.stderr);
  const report = JSON.parse(doctor.stdout) as { ok: boolean; checks: { name: string; status: string; result: string }[] };
  assert.equal(report.ok, true);
  assert.deepEqual(
    report.checks.map((c) => [c.name, c.status]),
    [
      ['connectivity', 'ok'],
      ['schema', 'ok'],
      ['clock skew', 'skip'],
    ],
  );
  assert.match(report.checks[2]?.result ?? '', /n\/a: SQLite uses this host's clock/);
});

test('doctor on a SQLite file that does not exist exits 1 and does not create it', { timeout: E2E_TIMEOUT_MS }, async (t) => {
  const dir = await tempDir(t);
  const doctor = await runKiln(['doctor', '--db', 'typo.db'], dir);
  assert.equal(doctor.code, ExitCode.failure, doctor.stdout + doctor.stderr);
  assert.match(doctor.stdout, /^connectivity\s+fail\s+cannot reach the store: no SQLite store at /m);
  assert.equal(existsSync(join(dir, 'typo.db')), false);
});

test('--db together with a postgres --store is a configuration error naming both flags', { timeout: E2E_TIMEOUT_MS }, async (t) => {
  const dir = await tempDir(t);
  const result = await runKiln(['migrate', '--db', 'k.db', '--store', 'postgres://kiln:s3cret@127.0.0.1:1/kiln'], dir);
  assert.equal(result.code, ExitCode.usage);
  assert.match(result.stderr, /CONFIG_INVALID/);
  assert.match(result.stderr, /flags --store: selects PostgreSQL but --db names a SQLite file too/);
  assert.doesNotMatch(result.stderr, /s3cret/);
});
