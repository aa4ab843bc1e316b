/**
 * Long-running server processes of the QR bench (`kiln serve`, the fastify hello-world): spawned
 * with a bounded output tail (a server logging every request must not fill this process's heap),
 * waited for until they answer HTTP, and always stopped by PID, even when the suite fails or is
 * interrupted.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';

/** Output kept per child for error messages, characters. */
const TAIL_CHARS = 16_384;
/** After SIGTERM a server gets this long to exit before SIGKILL. */
const STOP_GRACE_MS = 15_000;
const READY_POLL_MS = 100;

/** How a child ended. */
export interface ServerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A spawned server. */
export interface ServerChild {
  readonly pid: number;
  readonly child: ChildProcess;
  /** The last {@link TAIL_CHARS} characters of stdout and stderr. */
  outputTail(): string;
  /** Polls `url` until it answers 2xx; fails (with the output tail) after `timeoutMs`. */
  waitReady(url: string, timeoutMs: number): Promise<void>;
  /** SIGTERM, then SIGKILL after the grace period; resolves when the process is gone. */
  stop(): Promise<ServerExit>;
}

/** Every child still running, with its synchronous cleanup: the exit and signal handlers run these. */
const live = new Map<ChildProcess, (() => void) | undefined>();
let cleanupInstalled = false;

function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/**
 * Kills every live child when this process exits or is interrupted. Idempotent. On SIGINT or
 * SIGTERM the signal is re-raised after the kill, so the exit status still says what happened.
 */
function installCleanup(): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  const killAll = (): void => {
    for (const [child, cleanupSync] of live) {
      if (isRunning(child)) child.kill('SIGKILL');
      cleanupSync?.();
    }
  };
  process.once('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      killAll();
      process.kill(process.pid, signal);
    });
  }
}

/**
 * Spawns `node <argv>` in `cwd` with exactly `env`. `cleanupSync` (e.g. removing the child's temp
 * dir) runs after the kill when this process exits or is interrupted with the child still running;
 * a normal {@link ServerChild.stop} leaves cleanup to the caller.
 */
export function spawnServerChild(argv: readonly string[], cwd: string, env: NodeJS.ProcessEnv, cleanupSync?: () => void): ServerChild {
  installCleanup();
  const child = spawn(process.execPath, [...argv], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error(`could not spawn node ${argv.join(' ')}`);
  const pid = child.pid;
  live.set(child, cleanupSync);
  let tail = '';
  const keep = (chunk: Buffer): void => {
    tail = (tail + chunk.toString()).slice(-TAIL_CHARS);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<ServerExit>((resolve) =>
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    }),
  );
  return {
    pid,
    child,
    outputTail: () => tail,
    async waitReady(url, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        // A child that dies during start-up fails at once instead of after the whole timeout.
        if (!isRunning(child)) throw new Error(`pid ${pid} exited during start-up\n--- output ---\n${tail}`);
        if (await fetch(url).then((res) => res.ok, () => false)) return;
        if (Date.now() > deadline) throw new Error(`pid ${pid}: no 2xx from ${url} within ${timeoutMs} ms\n--- output ---\n${tail}`);
        await delay(READY_POLL_MS);
      }
    },
    async stop() {
      if (!isRunning(child)) return exited;
      process.kill(pid, 'SIGTERM');
      const timer = setTimeout(() => isRunning(child) && process.kill(pid, 'SIGKILL'), STOP_GRACE_MS);
      const status = await exited;
      clearTimeout(timer);
      return status;
    },
  };
}
