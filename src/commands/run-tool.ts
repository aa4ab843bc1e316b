/**
 * Runs an external command for a stage and guarantees nothing it started outlives the attempt or
 * the worker. The command runs under a small supervisor (supervisor.mjs) spawned detached, so
 * supervisor and command form one process group that kiln can kill as a whole:
 *
 * - on timeout or abort the WHOLE group gets SIGTERM, then SIGKILL after a short grace, so helpers
 *   the command forked die with it; when the command exits by itself, whatever it left running in
 *   its group is terminated the same way;
 * - when the worker process itself dies (even by SIGKILL, which runs no cleanup), the supervisor's
 *   IPC channel to it closes and the supervisor kills the group.
 *
 * No shell is involved: `cmd` and `args` reach execve as given. Every stdout line is passed to
 * `onLine` as it arrives (progress and output markers are the caller's business).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { constants } from 'node:os';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { StageFailure, ValidationError } from '../core/errors.ts';

/** Time between SIGTERM and SIGKILL to the tool's process group, by default. */
export const TOOL_KILL_GRACE_MS = 1000;
/** Most bytes kept of each of stdout and stderr, by default (stdout: the first, stderr: the last). */
export const TOOL_MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

const SUPERVISOR = fileURLToPath(new URL('./supervisor.mjs', import.meta.url));

/** Options of {@link runTool}. */
export interface RunToolOptions {
  /** Kill the tool (its whole process group) after this long; the call rejects with retryable `TOOL_TIMEOUT`. */
  timeoutMs: number;
  /** Abort: kill the group and reject with `signal.reason`. */
  signal?: AbortSignal;
  /** Called with every stdout line (without its line end). A throw stops the tool and rejects the call. */
  onLine?(line: string): void;
  /** SIGTERM-to-SIGKILL grace, in ms. */
  killGraceMs?: number;
  /** Working directory of the tool. @default process.cwd() */
  cwd?: string;
  /** The tool's whole environment. @default process.env */
  env?: Readonly<Record<string, string | undefined>>;
  /** Per-stream output cap, in bytes: stdout keeps its first bytes, stderr its last (lines past the cap are not seen). */
  maxOutputBytes?: number;
}

/** What a finished tool printed and how it ended. */
export interface RunToolResult {
  stdout: string;
  /** The end of stderr, when it was longer than the cap. */
  stderr: string;
  /** Exit code; `128 + signal number` when a signal ended it (shell convention). */
  code: number;
  /** The signal that ended the tool, or null when it exited. */
  signal: NodeJS.Signals | null;
  /** True when an output stream went over `maxOutputBytes` and was cut. */
  truncated: boolean;
}

/** Collects stdout as text, capped at its first bytes, splitting lines for `onLine`. */
class HeadText {
  private readonly decoder = new StringDecoder('utf8');
  private text = '';
  private bytes = 0;
  private pending = '';
  truncated = false;

  constructor(
    private readonly maxBytes: number,
    private readonly onLine: (line: string) => void,
  ) {}

  push(chunk: Buffer): void {
    const room = Math.max(0, this.maxBytes - this.bytes);
    if (chunk.length > room) this.truncated = true;
    const kept = this.decoder.write(chunk.subarray(0, room));
    this.bytes += Math.min(chunk.length, room);
    this.text += kept;
    const lines = (this.pending + kept).split('\n');
    this.pending = lines.pop() ?? '';
    for (const line of lines) this.onLine(line.replace(/\r$/, ''));
  }

  finish(): string {
    const rest = this.decoder.end();
    this.text += rest;
    if (this.pending + rest !== '') this.onLine((this.pending + rest).replace(/\r$/, ''));
    return this.text;
  }
}

/** Collects stderr, keeping its last bytes (the end of a failing tool's output says why). */
class TailBytes {
  private chunks: Buffer[] = [];
  private bytes = 0;
  truncated = false;

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    while (this.bytes > this.maxBytes && this.chunks.length > 0) {
      const first = this.chunks[0] as Buffer;
      const excess = this.bytes - this.maxBytes;
      this.truncated = true;
      if (first.length <= excess) {
        this.chunks.shift();
        this.bytes -= first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.bytes -= excess;
      }
    }
  }

  finish(): string {
    // A cut in the middle of a multi-byte character decodes to U+FFFD, which is fine for a message.
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/** Polling interval while waiting for a signalled process group to empty. */
const GROUP_POLL_MS = 20;

/** Sends `signal` to every process of the group led by `pid`; a group already gone is fine. */
function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** True while any process of the group led by `pid` exists (zombies included). */
function groupExists(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * SIGTERM to the group, then SIGKILL once it is empty or `graceMs` has passed, whichever is first;
 * resolves after the SIGKILL was sent. Returns at once when the group is already empty.
 */
async function terminateGroup(pid: number | undefined, graceMs: number): Promise<void> {
  if (pid === undefined || !groupExists(pid)) return;
  killGroup(pid, 'SIGTERM');
  const deadline = performance.now() + graceMs;
  while (groupExists(pid) && performance.now() < deadline) await delay(GROUP_POLL_MS);
  killGroup(pid, 'SIGKILL');
}

/** The environment as strings only (what execve takes). */
function stringEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/**
 * Runs `cmd args` (no shell) under the supervisor and resolves with its output and exit status,
 * whatever the code; rejects with retryable `TOOL_TIMEOUT` on timeout, with `signal.reason` on
 * abort, with `TOOL_UNAVAILABLE` (intervention) when it cannot be started. It settles only after
 * the tool exited and its process group was emptied (SIGTERM, grace, SIGKILL).
 */
export function runTool(cmd: string, args: readonly string[], options: RunToolOptions): Promise<RunToolResult> {
  const { signal } = options;
  if (!(options.timeoutMs > 0 && options.timeoutMs <= 2 ** 31 - 1)) {
    return Promise.reject(new ValidationError(`timeoutMs must be from 1 to 2^31-1, got ${options.timeoutMs}`));
  }
  if (signal?.aborted) return Promise.reject(signal.reason);
  const graceMs = options.killGraceMs ?? TOOL_KILL_GRACE_MS;
  const maxBytes = options.maxOutputBytes ?? TOOL_MAX_OUTPUT_BYTES;
  return new Promise<RunToolResult>((resolve, reject) => {
    let failure: { error: unknown } | undefined;
    let termination: Promise<void> | undefined;
    const stdout = new HeadText(maxBytes, (line) => {
      try {
        options.onLine?.(line);
      } catch (err) {
        stop(err);
      }
    });
    const stderr = new TailBytes(maxBytes);
    // The supervisor gets an empty environment and no arguments: the command's environment and
    // argv travel over the IPC channel, so they never show in the supervisor's /proc entry.
    const child = spawn(process.execPath, [SUPERVISOR], { detached: true, stdio: ['ignore', 'pipe', 'pipe', 'ipc'], env: {} });
    // Both exist: the stdio option above asks for pipes.
    const pipes = [child.stdout, child.stderr].filter((p): p is Readable => p !== null);

    /** The first reason wins; the group is terminated once, whoever asks first. */
    function stop(error: unknown): void {
      failure ??= { error };
      termination ??= terminateGroup(child.pid, graceMs);
    }
    const onAbort = (): void => stop(signal?.reason);
    const timer = setTimeout(() => stop(timeoutFailure(cmd, options.timeoutMs)), options.timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    const cleanup = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };

    let spawnError: { code: string; message: string } | undefined;
    let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    child.on('message', (message: SupervisorMessage) => {
      if (message.type === 'spawn-error') spawnError = { code: String(message.code), message: String(message.message) };
      if (message.type === 'exit') exited = { code: typeof message.code === 'number' ? message.code : null, signal: message.signal ?? null };
    });
    child.send({ cmd, args: [...args], env: stringEnv(options.env ?? process.env), cwd: options.cwd ?? process.cwd(), graceMs });
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.once('error', (err) => stop(err));
    child.once('exit', () => {
      // Whatever the tool left in its group would hold our pipes and run unsupervised.
      termination ??= terminateGroup(child.pid, graceMs);
      releasePipesAfter(child, pipes, graceMs);
    });
    // Messages are read before the channel reports its end, so a spawn error is known by then.
    const channelClosed = new Promise<void>((done) => (child.connected ? child.once('disconnect', done) : done()));
    child.once('close', (code, exitSignal) => {
      // A failed kill (EPERM: the group id was reused by someone else's processes) must not hang the call.
      void Promise.all([termination?.catch(() => undefined), channelClosed]).then(() => {
        cleanup();
        if (failure) return reject(failure.error);
        if (spawnError) return reject(unavailable(cmd, spawnError));
        // The supervisor's report is the command's status; its own exit mirrors it (as a fallback).
        const status = exited ?? { code, signal: exitSignal };
        const exitCode = status.code ?? 128 + (status.signal ? (constants.signals[status.signal] ?? 0) : 0);
        resolve({ stdout: stdout.finish(), stderr: stderr.finish(), code: exitCode, signal: status.signal, truncated: stdout.truncated || stderr.truncated });
      });
    });
  });
}

/** What the supervisor reports over IPC (see supervisor.mjs). */
interface SupervisorMessage {
  type?: 'spawn-error' | 'exit';
  code?: string | number | null;
  message?: string;
  signal?: NodeJS.Signals | null;
}

function unavailable(cmd: string, error: { code: string; message: string }): StageFailure {
  return StageFailure.intervention(`cannot start ${cmd}: ${error.message}`, { code: 'TOOL_UNAVAILABLE', details: { cmd, errno: error.code } });
}

function timeoutFailure(cmd: string, timeoutMs: number): StageFailure {
  return StageFailure.retryable(`${cmd} ran longer than ${timeoutMs} ms and was killed`, {
    code: 'TOOL_TIMEOUT',
    details: { cmd, timeoutMs },
  });
}

/**
 * A process outside the group (one that called setsid) could hold our pipes open forever: some
 * time after the leader's exit, stop reading them so 'close' fires.
 */
function releasePipesAfter(child: ChildProcess, pipes: readonly Readable[], graceMs: number): void {
  const fallback = setTimeout(() => {
    for (const pipe of pipes) pipe.destroy();
  }, 2 * graceMs + GROUP_POLL_MS);
  fallback.unref();
  child.once('close', () => clearTimeout(fallback));
}
