/**
 * `kiln doctor`'s checks over real stores (memory with fake clocks, SQLite files): what each check
 * reports, when it warns or fails, and that nothing is migrated.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { createMemoryStore } from '../../src/stores/memory/index.ts';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { allPassed, runDoctorChecks, type DoctorCheck } from '../../src/cli/doctor-checks.ts';
import type { ResolvedStore } from '../../src/config/schema.ts';
import { createFakeClock } from '../../src/core/clock.ts';
import { StoreUnavailableError } from '../../src/core/errors.ts';

const START_MS = Date.UTC(2026, 0, 1);
/** The memory store stands in for a store with a clock of its own, as PostgreSQL has. */
const REMOTE: ResolvedStore = { kind: 'postgres', url: 'postgres://kiln:s3cret@db.example:5432/kiln', schema: 'kiln' };

function byName(checks: readonly DoctorCheck[]): Record<string, DoctorCheck> {
  return Object.fromEntries(checks.map((c) => [c.name, c]));
}

/** Doctor over a memory store whose clock is `offsetMs` ahead of this host's. */
async function checkRemote(offsetMs: number): Promise<Record<string, DoctorCheck>> {
  const hostClock = createFakeClock(START_MS);
  const store = createMemoryStore({ clock: createFakeClock(START_MS + offsetMs) });
  await store.migrate();
  return byName(await runDoctorChecks(async () => store, { store: REMOTE, hostClock }));
}

describe('doctor checks', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kiln-doctor-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  test('a reachable, current store whose clock agrees with this host passes every check', async () => {
    const checks = await checkRemote(0);
    assert.deepEqual(
      Object.values(checks).map((c) => [c.name, c.status, c.action]),
      [
        ['connectivity', 'ok', null],
        ['schema', 'ok', null],
        ['clock skew', 'ok', null],
      ],
    );
    assert.match(checks['connectivity']!.result, /^connected in \d+ ms$/);
    assert.equal(checks['schema']!.result, 'version 1 (up to date)');
    assert.match(checks['clock skew']!.result, /in step with the store/);
  });

  test('a store clock seconds off is a warning, minutes off a failure, each saying which way and what to do', async () => {
    const ahead = (await checkRemote(5_000))['clock skew']!;
    assert.equal(ahead.status, 'warn');
    assert.match(ahead.result, /this host is 5000 ms behind the store/);
    assert.match(ahead.action ?? '', /NTP/);
    const behind = (await checkRemote(-120_000))['clock skew']!;
    assert.equal(behind.status, 'fail');
    assert.match(behind.result, /this host is 120000 ms ahead of the store/);
  });

  test('a store never migrated is a warning to run kiln migrate, and the doctor does not migrate it', async () => {
    const path = join(dir, 'empty.db');
    await createSqliteStore({ path }).close();
    const checks = await runDoctorChecks(async () => createSqliteStore({ path }), { store: { kind: 'sqlite', path } });
    const schema = byName(checks)['schema']!;
    assert.equal(schema.status, 'warn');
    assert.match(schema.result, /not initialised/);
    assert.match(schema.action ?? '', /kiln migrate/);
    assert.ok(allPassed(checks), 'warnings do not fail the doctor');
    const after = createSqliteStore({ path });
    try {
      assert.equal((await after.schemaVersion()).current, 0);
    } finally {
      await after.close();
    }
  });

  test('a store that cannot be opened fails connectivity without its password and skips the rest', async () => {
    const checks = await runDoctorChecks(
      async () => {
        throw new StoreUnavailableError('connection to postgres://kiln:s3cret@db.example:5432/kiln refused');
      },
      { store: REMOTE },
    );
    assert.deepEqual(
      checks.map((c) => [c.name, c.status]),
      [
        ['connectivity', 'fail'],
        ['schema', 'skip'],
        ['clock skew', 'skip'],
      ],
    );
    assert.match(checks[0]!.result, /cannot reach the store: connection to postgres:\/\/kiln:\*\*\*@db\.example:5432\/kiln refused/);
    assert.match(checks[0]!.action ?? '', /host and port/);
    assert.equal(allPassed(checks), false);
  });

  test('a store that never answers fails connectivity once the timeout passes', async () => {
    const hostClock = createFakeClock(START_MS);
    const pending = runDoctorChecks(() => new Promise(() => {}), { store: REMOTE, hostClock, timeoutMs: 2_000 });
    await hostClock.advance(2_000);
    const [connectivity] = await pending;
    assert.equal(connectivity?.status, 'fail');
    assert.match(connectivity?.result ?? '', /opening the store took longer than 2\.0 s/);
  });

  test('on SQLite the clock check does not apply, and a schema newer than this kiln fails', async () => {
    const path = join(dir, 'kiln.db');
    const store: ResolvedStore = { kind: 'sqlite', path };
    const setup = createSqliteStore({ path });
    const { version } = await setup.migrate();
    await setup.close();
    const current = byName(await runDoctorChecks(async () => createSqliteStore({ path }), { store }));
    assert.deepEqual([current['schema']!.status, current['clock skew']!.status], ['ok', 'skip']);
    assert.match(current['clock skew']!.result, /n\/a: SQLite uses this host's clock/);

    // A newer kiln's migration, recorded as that kiln would.
    const db = new Database(path);
    db.prepare('INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)').run(version + 1, '9999_from_the_future.sql', 0);
    db.close();
    const newer = byName(await runDoctorChecks(async () => createSqliteStore({ path }), { store }))['schema']!;
    assert.equal(newer.status, 'fail');
    assert.match(newer.result, new RegExp(`version ${version + 1} is newer than this kiln knows \\(${version}\\)`));
    assert.match(newer.action ?? '', /upgrade kiln/);
  });
});
