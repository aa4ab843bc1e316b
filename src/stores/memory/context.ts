/**
 * What every sub-port of the memory store shares: the state, and the one wrapper every port
 * method goes through ({@link MemoryContext.atomic}): refused once the store is closed, one
 * synchronous operation, its result copied out, wakes fired only after it succeeded.
 */
import type { Clock } from '../../core/clock.ts';
import type { IdGenerator } from '../../core/ids.ts';
import { closedStoreError, mapError } from './errors.ts';
import { copy } from './rows.ts';
import { MemoryState } from './state.ts';

/** A port method built from a synchronous body (see {@link MemoryContext.atomic}). */
export type Operation<Args extends unknown[], Result> = (...args: Args) => Promise<Result>;

/** Shared state of one memory store. */
export interface MemoryContext {
  readonly state: MemoryState;
  /**
   * `body` as one atomic operation: it is synchronous, so nothing interleaves. The result is
   * copied so callers can neither mutate the state nor see later changes.
   */
  atomic<Args extends unknown[], Result>(body: (...args: Args) => Result): Operation<Args, Result>;
  /** Refuses every later call and drops the wake listeners. */
  close(): void;
}

/** Creates the context of a memory store over a fresh, empty state. */
export function createContext(clock: Clock, ids: IdGenerator): MemoryContext {
  const state = new MemoryState(clock, ids);
  let closed = false;
  return {
    state,
    atomic: (body) => async (...args) => {
      if (closed) throw closedStoreError();
      try {
        const result = body(...args);
        state.flushWakes();
        return copy(result);
      } catch (err) {
        // Operations validate before they mutate, so a throw leaves nothing to wake for.
        state.pendingWakes.clear();
        throw mapError(err);
      }
    },
    close() {
      closed = true;
      state.wakeListeners.clear();
    },
  };
}
