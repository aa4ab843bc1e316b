/**
 * The in-memory reference store. Not shared between processes; state is lost on exit.
 */
import type { Clock } from '../../core/clock.ts';
import { systemClock } from '../../core/clock.ts';
import type { IdGenerator } from '../../core/ids.ts';
import { createIdGenerator } from '../../core/ids.ts';
import type { Store } from '../../core/ports/store.ts';
import { buildMemoryStore } from './store.ts';

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /** Source of the state's time. @default systemClock */
  clock?: Clock;
  /** Source of run/job ids and lease tokens. @default createIdGenerator(clock) */
  ids?: IdGenerator;
}

/** Creates an empty in-memory store; call `migrate()` before use, as with every store. */
export function createMemoryStore(options: MemoryStoreOptions = {}): Store {
  const clock = options.clock ?? systemClock;
  return buildMemoryStore({ clock, ids: options.ids ?? createIdGenerator(clock) });
}
