/**
 * `kiln tokens create|list|revoke` as real processes on a SQLite file: the secret is printed once
 * and never stored or listed (only its sha256 and last four characters are in the file); bad input
 * is refused with a code and exit 2 before anything is written; an unknown id is exit 3. Then a
 * real `kiln serve` on loopback: open while the store has no token, closed once the CLI creates
 * one, and a token revoked by the CLI is refused within 5 s.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ExitCode } from '../../src/cli/exit-codes.ts';
import { sha256Hex } from '../../src/core/canonical.ts';
import { cleanEnv, freePort, killIfRunning, runKiln, spawnKiln, waitUntil } from './kiln-process.ts';

const E2E_TIMEOUT_MS = 90_000;

async function tempDir(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-tokens-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

interface CreatedJson {
  id: string;
  tenant: string;
  name: string | null;
  scopes: string[];
  last4: string;
  expiresAt: number | null;
  createdAt: number;
  token: string;
}

test('tokens create prints the secret once; list never shows it; revoke; bad input refused with its exit code', { timeout: E2E_TIMEOUT_MS }, async (t) => {
  const dir = await tempDir(t);
  const kiln = (...args: string[]) => runKiln([...args, '--db', 'tokens.db'], dir);

  const created = await kiln('tokens', 'create', '--tenant', 'acme', '--scopes', 'submit,read', '--expires', '30d', '--name', 'ci');
  assert.equal(created.code, 0, created.stderr);
  const secret = /^token\s+(kiln_[A-Za-z0-9_-]{43})$/m.exec(created.stdout)?.[1];
  const id = /^id\s+(tok_[0-9a-f]+)$/m.exec(created.stdout)?.[1];
  assert.ok(secret && id, created.stdout);
  assert.match(created.stdout, /^scopes\s+read,submit$/m);
  assert.match(created.stdout, /cannot show it again/);

  const json = await kiln('tokens', 'create', '--tenant', 'ops', '--scopes', 'admin', '--json');
  assert.equal(json.code, 0, json.stderr);
  const second = JSON.parse(json.stdout) as CreatedJson;
  assert.match(second.token, /^kiln_/);
  assert.deepEqual([second.tenant, second.scopes, second.expiresAt, second.last4], ['ops', ['admin'], null, second.token.slice(-4)]);

  const listed = await kiln('tokens', 'list');
  assert.equal(listed.code, 0, listed.stderr);
  assert.equal(listed.stdout.includes(secret), false, 'list never prints a secret');
  assert.equal(listed.stdout.includes(second.token), false);
  assert.match(listed.stdout, new RegExp(`^${id}\\s+acme\\s+ci\\s+read,submit\\s+kiln_…${secret.slice(-4)}\\s.*\\sactive$`, 'm'));
  // The file holds the hash of each secret, never the secret.
  const file = await readFile(join(dir, 'tokens.db'));
  assert.equal(file.includes(secret), false);
  assert.equal(file.includes(second.token), false);
  assert.equal(file.includes(sha256Hex(secret)), true);

  const revoked = await kiln('tokens', 'revoke', id);
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.match(revoked.stdout, new RegExp(`token ${id} revoked at `));
  const after = JSON.parse((await kiln('tokens', 'list', '--json')).stdout) as { id: string; status: string; revokedAt: number | null }[];
  assert.deepEqual(after.map((r) => [r.id, r.status]), [[id, 'revoked'], [second.id, 'active']]);
  assert.equal(JSON.stringify(after).includes('kiln_'), false);

  const refusals: [string[], number, RegExp][] = [
    [['tokens', 'revoke', 'tok_unknown'], ExitCode.notFound, /kiln: NOT_FOUND: token tok_unknown not found/],
    [['tokens', 'create', '--tenant', 'a', '--scopes', 'read,write'], ExitCode.usage, /kiln: VALIDATION_FAILED: unknown scope "write"/],
    [['tokens', 'create', '--tenant', 'a', '--scopes', ','], ExitCode.usage, /VALIDATION_FAILED: at least one scope/],
    [['tokens', 'create', '--tenant', ' ', '--scopes', 'read'], ExitCode.usage, /VALIDATION_FAILED: --tenant must be/],
    [['tokens', 'create', '--tenant', 'acme/eu', '--scopes', 'read'], ExitCode.usage, /VALIDATION_FAILED: --tenant cannot contain "\/"/],
    [['tokens', 'create', '--tenant', 'a', '--scopes', 'read', '--expires', 'soon'], ExitCode.usage, /VALIDATION_FAILED: --expires must be a positive duration/],
    [['tokens', 'create', '--tenant', 'a', '--scopes', 'read', '--expires', '0d'], ExitCode.usage, /--expires must be a positive duration/],
    [['tokens', 'create', '--scopes', 'read'], ExitCode.usage, /required option '--tenant/],
  ];
  for (const [args, code, message] of refusals) {
    const res = await kiln(...args);
    assert.equal(res.code, code, `${args.join(' ')}: ${res.stderr}`);
    assert.match(res.stderr, message, args.join(' '));
  }
  assert.equal((JSON.parse((await kiln('tokens', 'list', '--json')).stdout) as unknown[]).length, 2, 'refused commands created nothing');
});

test('kiln serve on loopback: open without tokens, closed once the CLI creates one, a CLI revoke refused within 5 s', { timeout: E2E_TIMEOUT_MS }, async (t) => {
  const dir = await tempDir(t);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = cleanEnv({ KILN_LOG_LEVEL: 'warn', KILN_ARTIFACTS: join(dir, 'artifacts') });
  const serve = spawnKiln(['serve', '--port', String(port), '--db', 'serve.db', '--no-worker'], dir, env);
  t.after(async () => {
    killIfRunning(serve);
    await serve.exited;
  });
  await waitUntil('kiln serve /healthz', async () => ((await fetch(`${base}/healthz`)).ok ? true : undefined), 30_000, 100).catch((err: unknown) => {
    throw new Error(`${String(err)}\n${serve.output()}`);
  });
  assert.equal((await fetch(`${base}/v1/runs`)).status, 200, 'no token in the store: open, as before tokens');

  const created = await runKiln(['tokens', 'create', '--tenant', 'acme', '--scopes', 'read', '--json', '--db', 'serve.db'], dir, env);
  assert.equal(created.code, 0, created.stderr);
  const { id, token } = JSON.parse(created.stdout) as CreatedJson;
  const auth = { authorization: `Bearer ${token}` };
  await waitUntil('the server to ask for a token', async () => ((await fetch(`${base}/v1/runs`)).status === 401 ? true : undefined), 10_000, 100);
  assert.equal((await fetch(`${base}/healthz`)).status, 200);
  assert.equal((await fetch(`${base}/v1/runs`, { headers: auth })).status, 200);
  assert.equal((await fetch(`${base}/v1/queues/demo.sleep.prepare/pause`, { method: 'POST', headers: auth })).status, 403);

  const revoked = await runKiln(['tokens', 'revoke', id, '--db', 'serve.db'], dir, env);
  assert.equal(revoked.code, 0, revoked.stderr);
  const revokedAt = performance.now();
  let status = 200;
  while (status === 200 && performance.now() - revokedAt < 10_000) {
    status = (await fetch(`${base}/v1/runs`, { headers: auth })).status;
    if (status === 200) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const elapsedMs = performance.now() - revokedAt;
  assert.equal(status, 401);
  assert.ok(elapsedMs < 5_000, `refused ${Math.round(elapsedMs)} ms after kiln tokens revoke returned`);
});
