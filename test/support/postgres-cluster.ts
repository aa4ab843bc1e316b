/**
 * A private PostgreSQL for tests and benchmarks. `KILN_PG_URL` wins when set (a server someone
 * else runs: nothing is started or stopped). Otherwise, when the server binaries are installed
 * (`/usr/lib/postgresql/<major>/bin`), a throw-away cluster is created with `initdb` in a temp
 * directory and started on a free 127.0.0.1 port, its unix socket inside that directory, with
 * durability left at the defaults (fsync and synchronous_commit ON: benchmarks stay honest). When
 * neither is available, tests are skipped with the reason printed — except in CI (`CI=true`),
 * where a missing PostgreSQL is a failure.
 *
 * As root, the cluster runs as the `postgres` user (the server refuses to run as root).
 */
import { execFile, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.ts';

const run = promisify(execFile);

/** A running PostgreSQL the caller may use. */
export interface PostgresServer {
  /** Connection URL of a superuser on database `postgres`. */
  url: string;
  /** Stops the server and removes its files (a no-op for `KILN_PG_URL`). */
  stop(): Promise<void>;
}

/** Whether tests can get a PostgreSQL here: `undefined`, or why they are skipped. */
export type PostgresSkipReason = string | undefined;

/** A cluster this process created. */
interface OwnedCluster {
  dir: string;
  dataDir: string;
  binDir: string;
  port: number;
}

const SERVER_ROOT = '/usr/lib/postgresql';

/** The newest installed server's `bin` directory, if any. */
export function findBinDir(): string | undefined {
  if (!existsSync(SERVER_ROOT)) return undefined;
  const majors = readdirSync(SERVER_ROOT)
    .filter((name) => /^\d+$/.test(name) && existsSync(join(SERVER_ROOT, name, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return majors[0] === undefined ? undefined : join(SERVER_ROOT, majors[0], 'bin');
}

/**
 * Why PostgreSQL tests cannot run here, or `undefined` when they can. Throws in CI, where
 * PostgreSQL is required: a skipped suite there would hide a broken store.
 */
export function postgresSkipReason(): PostgresSkipReason {
  if (process.env.KILN_PG_URL) return undefined;
  if (findBinDir() !== undefined) return undefined;
  const reason = `PostgreSQL tests skipped: KILN_PG_URL is not set and no initdb under ${SERVER_ROOT}/*/bin (apt-get install postgresql)`;
  if (process.env.CI === 'true') throw new Error(`PostgreSQL is required in CI: ${reason}`);
  console.log(`# ${reason}`);
  return reason;
}


/** uid and gid of the `postgres` user, when this process is root and must switch to it. */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  if (!Number.isInteger(uid) || !Number.isInteger(gid) || uid <= 0) {
    throw new Error('running as root but there is no postgres user to run the server as');
  }
  return { uid, gid };
}

/** Command and arguments to run a server binary, as the `postgres` user when we are root. */
function asServerUser(binary: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', binary, ...args]] : [binary, args];
}

async function runServerTool(cluster: Pick<OwnedCluster, 'binDir'>, tool: string, args: string[]): Promise<void> {
  const [command, argv] = asServerUser(join(cluster.binDir, tool), args);
  try {
    await run(command, argv, { timeout: 60_000 });
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${tool} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

/** `pg_ctl <action>` with the cluster's data dir; `start`/`restart` pass the server options. */
async function pgCtl(cluster: OwnedCluster, action: 'start' | 'stop' | 'restart'): Promise<void> {
  const serverOptions = [
    `-p ${cluster.port}`,
    `-k ${cluster.dir}`,
    '-c listen_addresses=127.0.0.1',
    '-c max_connections=200',
  ].join(' ');
  const args = ['-D', cluster.dataDir, '-w', '-t', '60', '-l', join(cluster.dir, 'server.log')];
  if (action !== 'stop') args.push('-o', serverOptions);
  if (action !== 'start') args.push('-m', 'fast');
  await runServerTool(cluster, 'pg_ctl', [action, ...args]);
}

/** Stops a cluster at once, synchronously: the last resort when the process exits without `stop()`. */
function killSync(cluster: OwnedCluster): void {
  const [command, argv] = asServerUser(join(cluster.binDir, 'pg_ctl'), ['stop', '-D', cluster.dataDir, '-m', 'immediate', '-w']);
  spawnSync(command, argv, { stdio: 'ignore' });
  rmSync(cluster.dir, { recursive: true, force: true });
}

/** Creates and starts a cluster in a new temp directory. */
async function startCluster(binDir: string): Promise<OwnedCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'kiln-pg-'));
  const user = postgresUser();
  if (user) chownSync(dir, user.uid, user.gid);
  const cluster: OwnedCluster = { dir, dataDir: join(dir, 'data'), binDir, port: await freePort() };
  try {
    // --no-sync only skips flushing initdb's own files (a throw-away cluster); the server itself
    // runs with fsync and synchronous_commit on.
    await runServerTool(cluster, 'initdb', ['-D', cluster.dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
    await pgCtl(cluster, 'start');
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return cluster;
}

let owned: OwnedCluster | undefined;

/**
 * Starts a PostgreSQL for the caller: the `KILN_PG_URL` server, else a private cluster. Call
 * {@link postgresSkipReason} first; this throws when neither is available.
 */
export async function startPostgres(): Promise<PostgresServer> {
  const external = process.env.KILN_PG_URL;
  if (external) return { url: external, stop: async () => {} };
  const binDir = findBinDir();
  if (binDir === undefined) throw new Error(`no PostgreSQL: set KILN_PG_URL or install the server (initdb under ${SERVER_ROOT})`);
  const cluster = await startCluster(binDir);
  owned = cluster;
  const onExit = (): void => killSync(cluster);
  process.once('exit', onExit);
  let stopped = false;
  return {
    url: `postgresql://postgres@127.0.0.1:${cluster.port}/postgres`,
    async stop() {
      if (stopped) return;
      stopped = true;
      process.removeListener('exit', onExit);
      if (owned === cluster) owned = undefined;
      try {
        await pgCtl(cluster, 'stop');
      } finally {
        rmSync(cluster.dir, { recursive: true, force: true });
      }
    },
  };
}

let shared: Promise<PostgresServer> | undefined;

/**
 * One server per test process, started on first use and stopped when the process exits (test
 * files run in their own processes, so each file gets its own cluster).
 */
export function sharedPostgres(): Promise<PostgresServer> {
  if (!shared) {
    shared = startPostgres();
    // Stopped by the exit hook of startPostgres: node:test has no "after all files" hook here.
  }
  return shared;
}

/**
 * Restarts the cluster this process started (`pg_ctl restart -m fast`): every connection is
 * terminated, then the server accepts connections again on the same port. For chaos tests; a
 * `KILN_PG_URL` server cannot be restarted from here.
 */
export async function restartPostgres(): Promise<void> {
  if (!owned) throw new Error('restartPostgres needs a cluster started by this process (not KILN_PG_URL)');
  await pgCtl(owned, 'restart');
}

/**
 * Stops the cluster this process started without removing it, for tests of an outage; pair it
 * with {@link startStoppedPostgres}.
 */
export async function stopPostgresForOutage(): Promise<void> {
  if (!owned) throw new Error('stopPostgresForOutage needs a cluster started by this process (not KILN_PG_URL)');
  await pgCtl(owned, 'stop');
}

/** Starts again the cluster stopped by {@link stopPostgresForOutage}. */
export async function startStoppedPostgres(): Promise<void> {
  if (!owned) throw new Error('startStoppedPostgres needs a cluster started by this process (not KILN_PG_URL)');
  await pgCtl(owned, 'start');
}

/** True when this process owns its server (and so may restart it). */
export function canRestartPostgres(): boolean {
  return owned !== undefined;
}

let schemaCounter = 0;

/** A schema name unique to this process and call, for per-test isolation (`kiln_t<pid>_<n>`). */
export function createSchemaName(prefix = 'kiln_t'): string {
  schemaCounter += 1;
  return `${prefix}${process.pid}_${schemaCounter}`;
}
