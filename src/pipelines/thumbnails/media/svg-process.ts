/**
 * Rasterizes one SVG in a child process of its own (svg-render-child.mjs), so the work can be
 * stopped: resvg's render is native code that neither an AbortSignal nor `Worker.terminate()`
 * interrupts, and an abandoned render would keep a core busy long after its attempt timed out.
 * The child is SIGKILLed when the attempt's signal aborts (the stage timed out, the lease was
 * lost, the worker shuts down: the abort reason is rethrown) or when the render outlives its
 * budget, which is a permanent `ASSET_TOO_COMPLEX`: the same drawing would take as long next time.
 */
import { fork } from 'node:child_process';
import type { ResvgRenderOptions } from '@resvg/resvg-js';
import { assetFailure } from './asset-failure.ts';

const CHILD = new URL('./svg-render-child.mjs', import.meta.url);

/** What the child renders: sanitized SVG bytes and resvg options (fonts, fitTo). */
export interface SvgRenderJob {
  svg: Uint8Array;
  options: ResvgRenderOptions;
}

/** How long a render may take and what stops it early. */
export interface SvgRenderLimits {
  budgetMs: number;
  signal?: AbortSignal;
}

/** The child's answer. */
type ChildAnswer = { ok: true; png: Uint8Array; width: number; height: number } | { ok: false; message: string };

/** What ended a render that produced no answer. */
type Ending = { kind: 'answer'; answer: ChildAnswer } | { kind: 'budget' } | { kind: 'aborted' } | { kind: 'exited'; detail: string };

/**
 * Renders `job` in a new child process. Resolves with the child's answer; rejects with the abort
 * reason, `ASSET_TOO_COMPLEX` past the budget, or a plain (retryable) error when the child died
 * on its own (out of memory, say). The child is gone when this settles, whichever way.
 */
export async function renderInChildProcess(job: SvgRenderJob, limits: SvgRenderLimits): Promise<ChildAnswer> {
  if (limits.signal?.aborted) throw limits.signal.reason;
  // execArgv []: the child needs no TypeScript loader, and must not inherit inspector flags.
  const child = fork(CHILD, [], { serialization: 'advanced', execArgv: [], stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
  // 'close' comes after the last message and the exit, so an answer is never mistaken for a death.
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    const ending = await new Promise<Ending>((resolve) => {
      child.once('message', (answer) => resolve({ kind: 'answer', answer: answer as ChildAnswer }));
      child.once('close', (code, signal) => resolve({ kind: 'exited', detail: signal ?? `exit code ${String(code)}` }));
      child.once('error', (err) => resolve({ kind: 'exited', detail: err.message }));
      timer = setTimeout(() => resolve({ kind: 'budget' }), limits.budgetMs);
      onAbort = () => resolve({ kind: 'aborted' });
      limits.signal?.addEventListener('abort', onAbort, { once: true });
      child.send({ svg: job.svg, options: job.options });
    });
    switch (ending.kind) {
      case 'answer':
        return ending.answer;
      case 'aborted':
        throw limits.signal?.reason ?? new Error('SVG render aborted');
      case 'budget':
        throw assetFailure('ASSET_TOO_COMPLEX', `the SVG did not render within its budget of ${limits.budgetMs} ms`, { budgetMs: limits.budgetMs });
    }
    throw new Error(`the SVG render process ended without an answer (${ending.detail})`);
  } finally {
    clearTimeout(timer);
    if (onAbort !== undefined) limits.signal?.removeEventListener('abort', onAbort);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await closed;
  }
}
