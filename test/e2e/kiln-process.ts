/**
 * Running the real `kiln` command (bin/kiln.js) as child processes: spawn long-running ones,
 * run short ones to completion, find free ports, poll for conditions.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from '../support/free-port.ts';

/** Absolute path of bin/kiln.js. */
export const KILN_BIN = fileURLToPath(new URL('../../bin/kiln.js', import.meta.url));

/** Absolute path of the repository's src/index.ts (for test pipeline modules). */
export const KILN_INDEX = fileURLToPath(new URL('../../src/index.ts', import.meta.url));

/**
 * The environment minus everything kiln reads (OpenTelemetry's `OTEL_*` included), so the host's
 * settings cannot leak into a test.
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('KILN_') || k.startsWith('OTEL_') || k === 'PORT' || k === 'HOST') continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

/** How a process ended. */
export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A spawned long-running kiln process. */
export interface KilnProcess {
  child: ChildProcess;
  /** stdout and stderr so far. */
  output(): string;
  exited: Promise<ExitStatus>;
}

/** Spawns `kiln <args>` in `cwd`. */
export function spawnKiln(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = cleanEnv()): KilnProcess {
  const child = spawn(process.execPath, [KILN_BIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<ExitStatus>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, output: () => out, exited };
}

/** Result of a kiln command run to completion. */
export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `kiln <args>` to completion (killed after `timeoutMs`). */
export function runKiln(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = cleanEnv(), timeoutMs = 20_000): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [KILN_BIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}


/** Polls `probe` every `intervalMs` until it returns a value other than undefined; fails after `timeoutMs`. */
export async function waitUntil<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Kills a child if it is still running (test cleanup). */
export function killIfRunning(p: KilnProcess): void {
  if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
}

/** Resolves with the exit status of `p`, or rejects after `timeoutMs` naming `what` with the process output. */
export async function exitWithin(p: KilnProcess, what: string, timeoutMs: number): Promise<ExitStatus> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}\n${p.output()}`)), timeoutMs);
  });
  try {
    return await Promise.race([p.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export { freePort };
