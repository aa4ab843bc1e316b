/**
 * A private redis-server for tests and benchmarks. `KILN_REDIS_URL` wins when set (a server
 * someone else runs: nothing is started or stopped). Otherwise, when Debian's `redis-server` is
 * installed, one is started on a free 127.0.0.1 port with its files in a temp directory and AOF
 * persistence (`appendfsync everysec`, the setting the README recommends for most deployments).
 * When neither is available, tests are skipped with the reason printed — except in CI
 * (`CI=true`), where a missing Redis is a failure.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';

/** A running Redis the caller may use. */
export interface RedisServer {
  /** `redis://127.0.0.1:<port>`. */
  url: string;
  /** The private server's process id (absent for `KILN_REDIS_URL`), e.g. to sample its memory. */
  pid?: number;
  /** Stops the server and removes its files (a no-op for `KILN_REDIS_URL`). */
  stop(): Promise<void>;
}

/** Whether tests can get a Redis here: `undefined`, or why they are skipped. */
export type RedisSkipReason = string | undefined;

const BINARY = 'redis-server';

/** True when Debian's `redis-server` (or one on PATH) can be started here. */
export function hasRedisServer(): boolean {
  return spawnSync(BINARY, ['--version'], { stdio: 'ignore' }).status === 0;
}

/** Why Redis tests cannot run here, or `undefined` when they can. Throws in CI. */
export function redisSkipReason(): RedisSkipReason {
  if (process.env.KILN_REDIS_URL) return undefined;
  if (hasRedisServer()) return undefined;
  const reason = 'Redis tests skipped: KILN_REDIS_URL is not set and redis-server is not installed (apt-get install redis-server)';
  if (process.env.CI === 'true') throw new Error(`Redis is required in CI: ${reason}`);
  console.log(`# ${reason}`);
  return reason;
}


/** Sends one inline command to the server on `port`; its first reply line, or undefined (no answer within `timeoutMs`). */
function ask(port: number, command: string, timeoutMs = 500): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let data = '';
    socket.setTimeout(timeoutMs, () => socket.destroy());
    socket.on('connect', () => socket.write(`${command}\r\n`));
    socket.on('data', (chunk) => {
      data += chunk.toString();
      if (data.includes('\r\n')) {
        socket.destroy();
        resolve(data.slice(0, data.indexOf('\r\n')));
      }
    });
    socket.on('error', () => resolve(undefined));
    socket.on('close', () => resolve(undefined));
  });
}

/** Resolves once `PING` on `port` answers `PONG`; rejects after `timeoutMs`. */
async function waitForPong(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await ask(port, 'PING')) !== '+PONG') {
    if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer PING within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A server this process started. */
interface OwnedServer {
  dir: string;
  port: number;
  child: ChildProcess | undefined;
  /** Settings after the defaults (a later `--name value` wins over the default's). */
  serverArgs: readonly string[];
}

/** Options of {@link startRedis}. */
export interface StartRedisOptions {
  /**
   * Extra redis-server arguments after the defaults, e.g. `['--appendonly', 'no']` (a later
   * setting wins). Given any, a private server is always started, even when `KILN_REDIS_URL` is set
   * (someone else's server does not take our settings).
   */
  serverArgs?: readonly string[];
}

function spawnServer(server: OwnedServer): ChildProcess {
  const child = spawn(
    BINARY,
    [
      '--bind', '127.0.0.1',
      '--port', String(server.port),
      '--dir', server.dir,
      '--save', '',
      '--appendonly', 'yes',
      '--appendfsync', 'everysec',
      '--protected-mode', 'yes',
      '--daemonize', 'no',
      '--logfile', join(server.dir, 'server.log'),
      ...server.serverArgs,
    ],
    { stdio: 'ignore' },
  );
  child.on('error', () => {});
  return child;
}

async function stopChild(server: OwnedServer): Promise<void> {
  const child = server.child;
  server.child = undefined;
  if (child === undefined || child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

let owned: OwnedServer | undefined;

/** Starts a Redis for the caller: the `KILN_REDIS_URL` server, else (or with `serverArgs`) a private one. */
export async function startRedis(options: StartRedisOptions = {}): Promise<RedisServer> {
  const serverArgs = options.serverArgs ?? [];
  const external = process.env.KILN_REDIS_URL;
  if (external && serverArgs.length === 0) return { url: external, stop: async () => {} };
  const server: OwnedServer = { dir: mkdtempSync(join(tmpdir(), 'kiln-redis-')), port: await freePort(), child: undefined, serverArgs };
  server.child = spawnServer(server);
  try {
    await waitForPong(server.port, 10_000);
  } catch (err) {
    await stopChild(server);
    rmSync(server.dir, { recursive: true, force: true });
    throw err;
  }
  // Only the default server is the one stopRedisForOutage and startStoppedRedis act on.
  if (serverArgs.length === 0) owned = server;
  const onExit = (): void => {
    server.child?.kill('SIGKILL');
    rmSync(server.dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  let stopped = false;
  return {
    url: `redis://127.0.0.1:${server.port}`,
    ...(server.child?.pid === undefined ? {} : { pid: server.child.pid }),
    async stop() {
      if (stopped) return;
      stopped = true;
      process.removeListener('exit', onExit);
      if (owned === server) owned = undefined;
      await stopChild(server);
      rmSync(server.dir, { recursive: true, force: true });
    },
  };
}

let shared: Promise<RedisServer> | undefined;

/** One server per test process, started on first use and stopped when the process exits. */
export function sharedRedis(): Promise<RedisServer> {
  shared ??= startRedis();
  return shared;
}

/**
 * Kills the server this process started (SIGKILL) without removing its files; pair it with
 * {@link startStoppedRedis}. The crash loses nothing the server acknowledged: just before it, the
 * server is switched to `appendfsync always`. Under `everysec` it would not be so: while a
 * background fsync is slow (a busy disk), Redis postpones writing its AOF for up to 2 s and still
 * answers, so a SIGKILL then drops acknowledged writes (every fdatasync delayed 1.5 s by strace:
 * 2 kills of 3 lost 9,058 of 23,826 and 23,323 of 41,385 acknowledged INCRs; after the switch,
 * whose reply comes only once the postponed buffer is written and fsynced, 4 of 4 lost none). A
 * test that asserts "nothing lost" across the outage needs a server that promises it.
 */
export async function stopRedisForOutage(): Promise<void> {
  if (!owned) throw new Error('stopRedisForOutage needs a server started by this process (not KILN_REDIS_URL)');
  const answer = await ask(owned.port, 'CONFIG SET appendfsync always', 10_000);
  if (answer !== '+OK') throw new Error(`redis-server on port ${owned.port} refused CONFIG SET appendfsync always: ${answer ?? 'no answer'}`);
  await stopChild(owned);
}

/** Starts again, on the same port and files, the server stopped by {@link stopRedisForOutage}. */
export async function startStoppedRedis(): Promise<void> {
  if (!owned) throw new Error('startStoppedRedis needs a server started by this process (not KILN_REDIS_URL)');
  owned.child = spawnServer(owned);
  await waitForPong(owned.port, 10_000);
}

/** True when this process owns its server (and so may stop and start it). */
export function canRestartRedis(): boolean {
  return owned !== undefined;
}

let nameCounter = 0;

/** A store name unique to this process and call, for per-test isolation (`t<pid>_<n>`). */
export function createStoreName(prefix = 't'): string {
  nameCounter += 1;
  return `${prefix}${process.pid}_${nameCounter}`;
}
