/**
 * The `kiln` command on PostgreSQL, as real processes over a real server (a private cluster, or
 * `KILN_PG_URL`), each run in a private schema: `migrate --store` says what it applied, `serve
 * --store` runs a demo run over HTTP, `doctor --store` passes its checks, and `doctor` against a
 * port nobody listens on exits 1 naming the connectivity failure. No output shows a password.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ExitCode } from '../../src/cli/exit-codes.ts';
import { dropSchema } from '../integration/http-stores.ts';
import { canRestartPostgres, createSchemaName, postgresSkipReason, sharedPostgres } from '../support/postgres-cluster.ts';
import { cleanEnv, freePort, killIfRunning, runKiln, spawnKiln, waitUntil } from './kiln-process.ts';

/** Each test normally takes a few seconds; this bounds a hung child process. */
const E2E_TIMEOUT_MS = 60_000;
/** Put into the URL of a server we own (trust auth ignores it), to prove no output shows it. */
const PASSWORD = 'hunter2-never-printed';

/**
 * The server's URL; for a cluster this process started, with a password added (trust auth
 * accepts any), so the tests can check that no output ever shows it.
 */
async function storeUrl(): Promise<string> {
  const { url } = await sharedPostgres();
  const parsed = new URL(url);
  if (canRestartPostgres() && parsed.password === '') parsed.password = PASSWORD;
  return parsed.toString();
}

interface Workspace {
  dir: string;
  url: string;
  schema: string;
  env: NodeJS.ProcessEnv;
}

async function workspace(t: { after(fn: () => Promise<void>): void }): Promise<Workspace> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-cli-pg-'));
  const url = await storeUrl();
  const schema = createSchemaName('kiln_e2e_');
  t.after(async () => {
    await dropSchema(url, schema);
    await rm(dir, { recursive: true, force: true });
  });
  return { dir, url, schema, env: cleanEnv({ KILN_PG_SCHEMA: schema }) };
}

function assertNoPassword(text: string): void {
  assert.doesNotMatch(text, new RegExp(PASSWORD), 'a password was printed');
}

describe('kiln on PostgreSQL', { skip: postgresSkipReason() }, () => {
  test('migrate, then serve runs a demo run over HTTP, and doctor passes every check', { timeout: E2E_TIMEOUT_MS }, async (t) => {
    const { dir, url, schema, env } = await workspace(t);

    const migrated = await runKiln(['migrate', '--store', url], dir, env);
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.match(migrated.stdout, new RegExp(`^store: postgres postgres(ql)?://.*\\(schema ${schema}\\)$`, 'm'));
    assert.match(migrated.stdout, /^applied: 1(, \d+)*$/m);
    const version = /^schema version (\d+) in force \(the latest this kiln knows: (\d+)\)$/m.exec(migrated.stdout);
    assert.ok(version && version[1] === version[2], migrated.stdout);
    const again = await runKiln(['migrate', '--store', url, '--json'], dir, env);
    assert.deepEqual(JSON.parse(again.stdout).applied, []);

    const serve = spawnKiln(['serve', '--store', url, '--port', '0'], dir, env);
    t.after(async () => {
      killIfRunning(serve);
      await serve.exited;
    });
    const base = await waitUntil('kiln serve to listen', async () => /kiln serving on (http:\/\/[\d.:]+)/.exec(serve.output())?.[1], 20_000, 100).catch(
      (err: unknown) => {
        throw new Error(`${String(err)}\n--- serve output ---\n${serve.output()}`);
      },
    );
    const health = (await (await fetch(`${base}/healthz`)).json()) as { status: string; store: string };
    assert.deepEqual([health.status, health.store], ['ok', 'postgres']);

    const submitted = await fetch(`${base}/v1/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pipeline: 'demo.sleep', input: { delayMs: 10 } }),
    });
    assert.equal(submitted.status, 202);
    const runId = ((await submitted.json()) as { id: string }).id;
    const run = await waitUntil(
      'the run to end',
      async () => {
        const body = (await (await fetch(`${base}/v1/runs/${runId}`)).json()) as { status: string; stages: { status: string }[] };
        return ['succeeded', 'failed', 'dead_lettered'].includes(body.status) ? body : undefined;
      },
      20_000,
    );
    assert.equal(run.status, 'succeeded');
    assert.deepEqual(
      run.stages.map((s) => s.status),
      ['succeeded', 'succeeded', 'succeeded'],
    );

    const doctor = await runKiln(['doctor', '--store', url], dir, env);
    assert.equal(doctor.code, ExitCode.ok, `${doctor.stdout}\n${doctor.stderr}`);
    assert.match(doctor.stdout, /^CHECK\s+STATUS\s+RESULT\s+ACTION$/m);
    assert.match(doctor.stdout, /^connectivity\s+ok\s+connected in /m);
    assert.match(doctor.stdout, /^schema\s+ok\s+version \d+ \(up to date\)/m);
    assert.match(doctor.stdout, /^clock skew\s+ok\s+/m);

    serve.child.kill('SIGTERM');
    assert.deepEqual(await serve.exited, { code: 0, signal: null }, serve.output());
    for (const text of [migrated.stdout, migrated.stderr, serve.output(), doctor.stdout, doctor.stderr]) assertNoPassword(text);
  });

  test('doctor against a port nobody listens on exits 1 naming the connectivity failure', { timeout: E2E_TIMEOUT_MS }, async (t) => {
    const { dir, url, env } = await workspace(t);
    const wrong = new URL(url);
    wrong.port = String(await freePort());
    const doctor = await runKiln(['doctor', '--store', wrong.toString(), '--timeout', '3000'], dir, env);
    assert.equal(doctor.code, ExitCode.failure, `${doctor.stdout}\n${doctor.stderr}`);
    assert.match(doctor.stdout, /^connectivity\s+fail\s+cannot reach the store: .*ECONNREFUSED/m);
    assert.match(doctor.stdout, /check that PostgreSQL runs and accepts connections/);
    assert.match(doctor.stdout, /^schema\s+skip\s+/m);
    assertNoPassword(doctor.stdout + doctor.stderr);
  });
});
