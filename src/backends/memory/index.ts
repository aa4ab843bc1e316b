/**
 * The in-memory reference backend. Not shared between processes; state is lost on exit.
 */
import type { Clock } from '../../core/clock.ts';
import { systemClock } from '../../core/clock.ts';
import type { IdGenerator } from '../../core/ids.ts';
import { createIdGenerator } from '../../core/ids.ts';
import type { Backend } from '../../core/ports.ts';
import { buildMemoryBackend } from './backend.ts';

/** Options of {@link createMemoryBackend}. */
export interface MemoryBackendOptions {
  /** Source of the store's time. @default systemClock */
  clock?: Clock;
  /** Source of run/job ids and lease tokens. @default createIdGenerator(clock) */
  ids?: IdGenerator;
}

/** Creates an empty in-memory backend; call `migrate()` before use, as with every backend. */
export function createMemoryBackend(options: MemoryBackendOptions = {}): Backend {
  const clock = options.clock ?? systemClock;
  return buildMemoryBackend({ clock, ids: options.ids ?? createIdGenerator(clock) });
}
