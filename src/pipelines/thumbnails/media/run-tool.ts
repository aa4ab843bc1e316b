/**
 * Runs an external tool for a stage and guarantees nothing it started outlives the run. The tool
 * is spawned detached, as the leader of its own process group; on timeout or abort the WHOLE
 * group gets SIGTERM, then SIGKILL after a short grace, so helpers the tool forked die with it.
 * When the tool exits by itself, whatever it left running in its group is terminated the same way.
 *
 * Lines `PROGRESS <text>` on the tool's stdout are progress markers: each is passed to
 * `onProgress` as it arrives and recorded in the result (the last one also in a timeout's details).
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { constants } from 'node:os';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { setTimeout as delay } from 'node:timers/promises';
import { StageFailure, ValidationError } from '../../../index.ts';

/** Time between SIGTERM and SIGKILL to the tool's process group, by default. */
export const TOOL_KILL_GRACE_MS = 1000;
/** Most bytes kept of each of stdout and stderr, by default; the rest is dropped (`truncated`). */
export const TOOL_MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

/** Options of {@link runTool}. */
export interface RunToolOptions {
  /** Kill the tool (its whole process group) after this long; the call rejects with retryable `TOOL_TIMEOUT`. */
  timeoutMs: number;
  /** Abort: kill the group and reject with `signal.reason`. */
  signal?: AbortSignal;
  /** Called with the text of every `PROGRESS <text>` stdout line. A throw stops the tool and rejects the call. */
  onProgress?(marker: string): void;
  /** SIGTERM-to-SIGKILL grace, in ms. */
  killGraceMs?: number;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Per-stream output cap, in bytes (progress markers past the cap are not seen either). */
  maxOutputBytes?: number;
}

/** What a finished tool printed and how it ended. */
export interface RunToolResult {
  stdout: string;
  stderr: string;
  /** Exit code; `128 + signal number` when a signal ended it (shell convention). */
  code: number;
  /** Every progress marker, in order. */
  progress: readonly string[];
  /** True when an output stream went over `maxOutputBytes` and was cut. */
  truncated: boolean;
}

/** Collects one output stream as text, capped; for stdout, also splits lines for progress markers. */
class StreamText {
  private readonly decoder = new StringDecoder('utf8');
  private text = '';
  private bytes = 0;
  private pending = '';
  truncated = false;

  constructor(
    private readonly maxBytes: number,
    private readonly onLine?: (line: string) => void,
  ) {}

  push(chunk: Buffer): void {
    const room = this.maxBytes - this.bytes;
    if (chunk.length > room) this.truncated = true;
    const kept = this.decoder.write(chunk.subarray(0, Math.max(0, room)));
    this.bytes += Math.min(chunk.length, Math.max(0, room));
    this.text += kept;
    if (this.onLine) this.splitLines(kept);
  }

  private splitLines(text: string): void {
    const lines = (this.pending + text).split('\n');
    this.pending = lines.pop() ?? '';
    for (const line of lines) this.onLine?.(line.replace(/\r$/, ''));
  }

  finish(): string {
    const rest = this.decoder.end();
    this.text += rest;
    if (this.onLine && this.pending + rest !== '') this.onLine((this.pending + rest).replace(/\r$/, ''));
    return this.text;
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

/** Where the PROGRESS markers go: recorded, then passed on. */
function progressRecorder(progress: string[], onProgress: RunToolOptions['onProgress'], onError: (err: unknown) => void): (line: string) => void {
  return (line) => {
    const marker = /^PROGRESS (.*)$/.exec(line)?.[1];
    if (marker === undefined) return;
    progress.push(marker);
    try {
      onProgress?.(marker);
    } catch (err) {
      onError(err);
    }
  };
}

/**
 * Runs `cmd args` (no shell) and resolves with its output and exit code, whatever the code;
 * rejects with retryable `TOOL_TIMEOUT` on timeout, with `signal.reason` on abort, with
 * `TOOL_UNAVAILABLE` (intervention) when it cannot be started. It settles only after the tool
 * exited and its process group was emptied (SIGTERM, grace, SIGKILL).
 */
export function runTool(cmd: string, args: string[], options: RunToolOptions): Promise<RunToolResult> {
  const { signal } = options;
  if (!(options.timeoutMs > 0 && options.timeoutMs <= 2 ** 31 - 1)) {
    return Promise.reject(new ValidationError(`timeoutMs must be from 1 to 2^31-1, got ${options.timeoutMs}`));
  }
  if (signal?.aborted) return Promise.reject(signal.reason);
  const graceMs = options.killGraceMs ?? TOOL_KILL_GRACE_MS;
  return new Promise<RunToolResult>((resolve, reject) => {
    const progress: string[] = [];
    let failure: { error: unknown } | undefined;
    let termination: Promise<void> | undefined;
    const stdout = new StreamText(options.maxOutputBytes ?? TOOL_MAX_OUTPUT_BYTES, progressRecorder(progress, options.onProgress, (err) => stop(err)));
    const stderr = new StreamText(options.maxOutputBytes ?? TOOL_MAX_OUTPUT_BYTES);
    const child = spawn(cmd, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'], cwd: options.cwd, env: options.env });

    /** The first reason wins; the group is terminated once, whoever asks first. */
    function stop(error: unknown): void {
      failure ??= { error };
      termination ??= terminateGroup(child.pid, graceMs);
    }
    const onAbort = (): void => stop(signal?.reason);
    const timer = setTimeout(() => stop(timeoutFailure(cmd, options.timeoutMs, progress)), options.timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    const cleanup = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };

    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.once('error', (err) => {
      // Before 'exit', only spawn failures land here (ENOENT, EACCES): the tool never ran.
      cleanup();
      reject(StageFailure.intervention(`cannot start ${cmd}: ${err.message}`, { code: 'TOOL_UNAVAILABLE', details: { cmd }, cause: err }));
    });
    child.once('exit', () => {
      // Whatever the tool left in its group would hold our pipes and run unsupervised.
      termination ??= terminateGroup(child.pid, graceMs);
      releasePipesAfter(child, graceMs);
    });
    child.once('close', (code, exitSignal) => {
      // A failed kill (EPERM: the group id was reused by someone else's processes) must not hang the call.
      void (termination ?? Promise.resolve()).catch(() => undefined).then(() => {
        cleanup();
        if (failure) return reject(failure.error);
        const exitCode = code ?? 128 + (exitSignal ? (constants.signals[exitSignal] ?? 0) : 0);
        resolve({ stdout: stdout.finish(), stderr: stderr.finish(), code: exitCode, progress, truncated: stdout.truncated || stderr.truncated });
      });
    });
  });
}

function timeoutFailure(cmd: string, timeoutMs: number, progress: readonly string[]): StageFailure {
  return StageFailure.retryable(`${cmd} ran longer than ${timeoutMs} ms and was killed`, {
    code: 'TOOL_TIMEOUT',
    details: { cmd, timeoutMs, lastProgress: progress.at(-1) ?? null },
  });
}

/**
 * A process outside the group (one that called setsid) could hold our pipes open forever: some
 * time after the leader's exit, stop reading them so 'close' fires.
 */
function releasePipesAfter(child: ChildProcessByStdio<null, Readable, Readable>, graceMs: number): void {
  const fallback = setTimeout(() => {
    child.stdout.destroy();
    child.stderr.destroy();
  }, 2 * graceMs + GROUP_POLL_MS);
  fallback.unref();
  child.once('close', () => clearTimeout(fallback));
}
