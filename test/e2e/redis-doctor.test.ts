/**
 * `kiln migrate` and `kiln doctor` on the Redis store, as real processes against real private
 * redis-servers started with the settings under test: the doctor reports the server's version,
 * says what its persistence settings guarantee (warning when persistence is off or RDB only, and
 * saying it cannot tell when an ACL refuses CONFIG), and fails on an evicting server with a
 * memory limit. Passwords never show.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { ExitCode } from '../../src/cli/exit-codes.ts';
import { redisSkipReason, startRedis, type RedisServer } from '../support/redis-server.ts';
import { cleanEnv, freePort, runKiln } from './kiln-process.ts';

const E2E_TIMEOUT_MS = 60_000;
const skip = redisSkipReason();

interface DoctorReport {
  store: string;
  ok: boolean;
  checks: { name: string; status: string; result: string; action: string | null }[];
}

/** Runs `kiln doctor --json` on `storeUrl` (through KILN_STORE, so the password is in no argv). */
async function doctor(storeUrl: string, dir: string): Promise<{ code: number | null; report: DoctorReport; text: string }> {
  const result = await runKiln(['doctor', '--json', '--timeout', '5000'], dir, cleanEnv({ KILN_STORE: storeUrl }));
  const text = result.stdout + result.stderr;
  return { code: result.code, report: JSON.parse(result.stdout) as DoctorReport, text };
}

function rows(report: DoctorReport): Record<string, { status: string; result: string; action: string | null }> {
  return Object.fromEntries(report.checks.map((c) => [c.name, c]));
}

/** A private server with `serverArgs`, stopped after the file's tests. */
function useServer(serverArgs: readonly string[]): () => RedisServer {
  let server: RedisServer | undefined;
  before(async () => {
    server = await startRedis({ serverArgs });
  });
  after(async () => {
    await server?.stop();
  });
  return () => {
    if (!server) throw new Error('server not started');
    return server;
  };
}

describe('kiln doctor on the Redis store', { skip }, () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kiln-redis-doctor-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  describe('AOF everysec (the recommended setting), a user refused CONFIG by its ACL', () => {
    const server = useServer([]);

    test('migrate, then doctor: version, schema and clock ok, eviction ok from INFO, persistence cannot tell the fsync policy', { timeout: E2E_TIMEOUT_MS }, async () => {
      const admin = new Redis(server().url);
      try {
        await admin.call('ACL', 'SETUSER', 'kiln', 'on', '>s3cret-pw', '~*', '&*', '+@all', '-config');
      } finally {
        admin.disconnect();
      }
      const url = `${server().url.replace('redis://', 'redis://kiln:s3cret-pw@')}/0?name=doctor-acl`;
      const migrated = await runKiln(['migrate'], dir, cleanEnv({ KILN_STORE: url }));
      assert.equal(migrated.code, 0, migrated.stdout + migrated.stderr);
      assert.match(migrated.stdout, /^store: redis redis:\/\/kiln:\*\*\*@127\.0\.0\.1:\d+\/0 \(name doctor-acl\)$/m);

      const { code, report, text } = await doctor(url, dir);
      assert.equal(code, ExitCode.ok, text);
      assert.doesNotMatch(text + migrated.stdout + migrated.stderr, /s3cret/);
      assert.deepEqual(
        report.checks.map((c) => [c.name, c.status]),
        [
          ['connectivity', 'ok'],
          ['schema', 'ok'],
          ['clock skew', 'ok'],
          ['redis version', 'ok'],
          ['persistence', 'warn'],
          ['eviction', 'ok'],
        ],
      );
      const found = rows(report);
      assert.match(found['redis version']!.result, /^Redis \d+\.\d+\.\d+$/);
      assert.match(found['persistence']!.result, /AOF on, fsync policy unknown \(cannot tell: CONFIG GET is refused \(NOPERM/);
      assert.match(found['eviction']!.result, /maxmemory-policy noeviction/);
    });

    test('a user refused INFO as well: every server row is a warning saying it cannot tell', { timeout: E2E_TIMEOUT_MS }, async () => {
      const admin = new Redis(server().url);
      try {
        await admin.call('ACL', 'SETUSER', 'blind', 'on', '>s3cret-pw', '~*', '&*', '+@all', '-config', '-info');
      } finally {
        admin.disconnect();
      }
      const { code, report, text } = await doctor(`${server().url.replace('redis://', 'redis://blind:s3cret-pw@')}?name=doctor-blind`, dir);
      assert.equal(code, ExitCode.ok, text);
      assert.doesNotMatch(text, /s3cret/);
      const serverRows = report.checks.slice(3);
      assert.deepEqual(
        serverRows.map((c) => [c.name, c.status]),
        [
          ['redis version', 'warn'],
          ['persistence', 'warn'],
          ['eviction', 'warn'],
        ],
      );
      for (const row of serverRows) assert.match(row.result, /^cannot tell: the server settings could not be read: .*NOPERM/);
    });
  });

  describe('AOF with appendfsync always', () => {
    const server = useServer(['--appendonly', 'yes', '--appendfsync', 'always', '--maxmemory-policy', 'noeviction']);

    test('persistence is ok and says every acknowledged commit survives a crash or power loss', { timeout: E2E_TIMEOUT_MS }, async () => {
      const { code, report, text } = await doctor(`${server().url}?name=doctor-always`, dir);
      assert.equal(code, ExitCode.ok, text);
      const found = rows(report);
      assert.equal(found['persistence']!.status, 'ok');
      assert.match(found['persistence']!.result, /AOF, appendfsync always: every acknowledged commit survives a crash or power loss/);
      assert.equal(found['schema']!.status, 'warn', 'never migrated, and the doctor does not migrate it');
    });
  });

  describe('no persistence and an evicting memory limit', () => {
    const server = useServer(['--appendonly', 'no', '--save', '', '--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru']);

    test('persistence off is a warning, eviction with a limit a failure: exit 1', { timeout: E2E_TIMEOUT_MS }, async () => {
      const { code, report, text } = await doctor(server().url, dir);
      assert.equal(code, ExitCode.failure, text);
      assert.equal(report.ok, false);
      const found = rows(report);
      assert.equal(found['persistence']!.status, 'warn');
      assert.match(found['persistence']!.result, /off \(no AOF, no RDB snapshots\): a restart loses every run, job and lease/);
      assert.match(found['persistence']!.action ?? '', /appendonly yes/);
      assert.equal(found['eviction']!.status, 'fail');
      assert.match(found['eviction']!.result, /maxmemory-policy allkeys-lru with maxmemory 67108864 bytes: when full, Redis silently deletes keys/);
      assert.match(found['eviction']!.action ?? '', /noeviction/);
    });
  });

  describe('RDB snapshots only, an eviction policy without a limit', () => {
    const server = useServer(['--appendonly', 'no', '--save', '3600 1', '--maxmemory-policy', 'volatile-lru']);

    test('both are warnings naming what a restart loses and what would evict', { timeout: E2E_TIMEOUT_MS }, async () => {
      const { code, report, text } = await doctor(server().url, dir);
      assert.equal(code, ExitCode.ok, text);
      const found = rows(report);
      assert.equal(found['persistence']!.status, 'warn');
      assert.match(found['persistence']!.result, /RDB snapshots only \(save 3600 1\): a restart loses every commit since the last snapshot/);
      assert.equal(found['eviction']!.status, 'warn');
      assert.match(found['eviction']!.result, /maxmemory-policy volatile-lru \(no maxmemory set yet\)/);
    });
  });

  test('a port nobody listens on fails connectivity and skips every other row', { timeout: E2E_TIMEOUT_MS }, async () => {
    const { code, report, text } = await doctor(`redis://:s3cret-pw@127.0.0.1:${await freePort()}`, dir);
    assert.equal(code, ExitCode.failure, text);
    assert.doesNotMatch(text, /s3cret/);
    assert.deepEqual(
      report.checks.map((c) => [c.name, c.status]),
      [
        ['connectivity', 'fail'],
        ['schema', 'skip'],
        ['clock skew', 'skip'],
        ['redis version', 'skip'],
        ['persistence', 'skip'],
        ['eviction', 'skip'],
      ],
    );
    assert.match(report.checks[0]!.action ?? '', /redis-server runs and accepts connections/);
  });
});
