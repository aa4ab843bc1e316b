/**
 * A real `kiln serve` for the QR bench: its own process (HTTP API plus embedded worker), the
 * default SQLite store and the artifact store in a fresh temp dir (the process's cwd, so the
 * default `./kiln-data` lands there too), listening on 127.0.0.1 only.
 */
import { rmSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { LogLevel } from '../../src/config/schema.ts';
import type { CpuProfileSummary } from '../engine-pg/cpu-profile.ts';
import { cleanEnv, freePort, KILN_BIN } from '../../test/e2e/kiln-process.ts';
import { spawnServerChild, type ServerChild } from './server-child.ts';

/** A fresh store runs its migrations first; this bounds start-up. */
const READY_TIMEOUT_MS = 20_000;
const PROFILE_PRELOAD = fileURLToPath(new URL('./serve-cpu-profile.ts', import.meta.url));
/** Environment variable naming the profile directory of the child (read by serve-cpu-profile.ts). */
export const PROFILE_DIR_ENV = 'QR_BENCH_CPU_PROF_DIR';
/** The summary the child writes into that directory when profiling stops. */
export const PROFILE_SUMMARY_FILE = 'summary.json';
/** Stopping writes the raw profile and resolves source maps; this bounds the wait for it. */
const PROFILE_STOP_TIMEOUT_MS = 30_000;

/** How to start the server. */
export interface KilnServeOptions {
  logLevel: LogLevel;
  /** When set, the child loads the SIGUSR2-controlled profiler (serve-cpu-profile.ts) writing here. */
  cpuProfDir?: string;
}

/** A running `kiln serve`. */
export interface KilnServe {
  server: ServerChild;
  baseUrl: string;
  /** The temp dir holding the store and the artifacts. */
  dir: string;
  /** The SQLite store's file, in `dir`. */
  dbPath: string;
  /** Stops the process (by PID) and removes the temp dir. */
  close(): Promise<void>;
}

/** Starts `kiln serve` and waits until `/healthz` answers. */
export async function startKilnServe(options: KilnServeOptions): Promise<KilnServe> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-bench-qr-'));
  const port = await freePort();
  const profiling = options.cpuProfDir !== undefined;
  // tsx by absolute URL: the child's cwd is the temp dir, where the bare name does not resolve.
  const nodeFlags = profiling ? ['--import', import.meta.resolve('tsx'), '--import', PROFILE_PRELOAD] : [];
  const dbPath = join(dir, 'store', 'kiln.db');
  const argv = [...nodeFlags, KILN_BIN, 'serve', '--host', '127.0.0.1', '--port', String(port), '--db', dbPath, '--log-level', options.logLevel];
  const env = cleanEnv(profiling ? { [PROFILE_DIR_ENV]: options.cpuProfDir ?? '' } : {});
  let server: ServerChild | undefined;
  const close = async (): Promise<void> => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    // Interrupted mid-run, the suite still removes the store: only synchronous work runs on exit.
    server = spawnServerChild(argv, dir, env, () => rmSync(dir, { recursive: true, force: true }));
    const baseUrl = `http://127.0.0.1:${port}`;
    await server.waitReady(`${baseUrl}/healthz`, READY_TIMEOUT_MS);
    return { server, baseUrl, dir, dbPath, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Starts the child's profiler (it must have been started with `cpuProfDir`). */
export function startServeProfile(serve: KilnServe): void {
  process.kill(serve.server.pid, 'SIGUSR2');
}

/** Stops the child's profiler and reads the summary it writes into `cpuProfDir`. */
export async function stopServeProfile(serve: KilnServe, cpuProfDir: string): Promise<CpuProfileSummary> {
  const path = join(cpuProfDir, PROFILE_SUMMARY_FILE);
  await rm(path, { force: true });
  process.kill(serve.server.pid, 'SIGUSR2');
  const deadline = Date.now() + PROFILE_STOP_TIMEOUT_MS;
  for (;;) {
    const text = await readFile(path, 'utf8').catch(() => undefined);
    if (text !== undefined) {
      const summary = JSON.parse(text) as CpuProfileSummary | { error: string };
      if ('error' in summary) throw new Error(`profiling kiln serve failed: ${summary.error}`);
      return summary;
    }
    if (Date.now() > deadline) throw new Error(`no CPU profile summary from pid ${serve.server.pid} within ${PROFILE_STOP_TIMEOUT_MS} ms`);
    await delay(100);
  }
}
