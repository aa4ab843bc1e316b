/**
 * Runs one benchmark system in its own Node process (separate heap, GC and RSS) and returns
 * the result line it printed. Shared by every suite so children are spawned, timed out and
 * parsed the same way.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseResultLine } from './engine-result.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** What to spawn. */
export interface ResultChildOptions {
  /** Absolute path of the child's `.ts` entry point. */
  script: string;
  /** Arguments after the script. */
  args: readonly string[];
  /** Node flags before `--import tsx` (e.g. `--cpu-prof`). */
  nodeFlags?: readonly string[];
  /** Extra environment variables, merged over this process's. */
  env?: Readonly<Record<string, string>>;
  /** A child that hangs (e.g. a lost wake-up) is killed so the suite still reports the others. */
  timeoutMs: number;
  /** Name used in error messages. */
  label: string;
}

/** Spawns the child, lets its stderr pass through, and resolves with its parsed result line. */
export function runResultChild(options: ResultChildOptions): Promise<unknown> {
  const argv = [...(options.nodeFlags ?? []), '--import', 'tsx', options.script, ...options.args];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, ...options.env },
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const timer = setTimeout(() => child.kill('SIGTERM'), options.timeoutMs);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const result = parseResultLine(stdout);
      if (code === 0 && result !== undefined) return resolve(result);
      reject(new Error(`${options.label} exited with ${signal ?? `code ${code}`} and ${result === undefined ? 'no' : 'a'} result line`));
    });
  });
}
