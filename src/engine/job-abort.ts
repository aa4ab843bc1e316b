/**
 * The abort of one held job: what the worker, the lease keeper and the timeout fire when the job
 * must stop, and what the executor waits on beside the handler. A handler sees it as
 * `ctx.signal`, an AbortSignal made on first read only: most handlers never read it, and an
 * AbortController (an EventTarget with its listener lists) per job was a large share of the hot
 * path's allocations.
 */
import type { StageAbortError } from './abort-reason.ts';

export class JobAbort {
  #reason: StageAbortError | undefined;
  #controller: AbortController | undefined;
  #listener: ((reason: StageAbortError) => void) | undefined;

  /** True once aborted. */
  get aborted(): boolean {
    return this.#reason !== undefined;
  }

  /** Why it was aborted (the first reason given), or undefined. */
  get reason(): StageAbortError | undefined {
    return this.#reason;
  }

  /** The signal handed to the handler: aborted with the same reason, now or later. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#reason !== undefined) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Aborts with `reason`; later calls change nothing. */
  abort(reason: StageAbortError): void {
    if (this.#reason !== undefined) return;
    this.#reason = reason;
    this.#controller?.abort(reason);
    const listener = this.#listener;
    this.#listener = undefined;
    listener?.(reason);
  }

  /** Calls `listener` once with the reason: at once if already aborted. One listener at a time (the executor's). */
  onAbort(listener: (reason: StageAbortError) => void): void {
    if (this.#reason !== undefined) listener(this.#reason);
    else this.#listener = listener;
  }
}
