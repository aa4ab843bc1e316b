/**
 * Completion tracking shared by the PostgreSQL benchmark children: handlers report starts and
 * finishes, the phase waits for a total, and a drain poll confirms in the database that the
 * last completions were committed (graphile-worker's batched completion and pg-boss's
 * un-awaited `complete` both return from the handler before the row changes).
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import type pg from 'pg';

/** A stuck phase fails instead of hanging the suite. */
export const PHASE_TIMEOUT_MS = 150_000;
const DRAIN_POLL_MS = 2;

/** Counts finished items and remembers when the first handler started. */
export interface Progress {
  /** Called at every handler start; the first call fixes {@link firstStartMs}. */
  started(): void;
  /** One more item finished. */
  finished(): void;
  /** `performance.now()` of the first handler start, if any. */
  firstStartMs(): number | undefined;
  /** Resolves once `total` items finished; rejects after {@link PHASE_TIMEOUT_MS}. */
  waitFor(total: number): Promise<void>;
}

/** Creates a {@link Progress}; `label` names the phase in the timeout message. */
export function createProgress(label: string): Progress {
  let done = 0;
  let first: number | undefined;
  let waiter: { total: number; resolve: () => void } | undefined;
  return {
    started() {
      first ??= performance.now();
    },
    finished() {
      done++;
      if (waiter && done >= waiter.total) waiter.resolve();
    },
    firstStartMs: () => first,
    waitFor(total) {
      return new Promise((resolve, reject) => {
        if (done >= total) return resolve();
        const timer = setTimeout(() => reject(new Error(`${label}: only ${done}/${total} finished after ${PHASE_TIMEOUT_MS} ms`)), PHASE_TIMEOUT_MS);
        waiter = {
          total,
          resolve: () => {
            clearTimeout(timer);
            waiter = undefined;
            resolve();
          },
        };
      });
    },
  };
}

/**
 * Polls `countSql` (a single `count` column) every 2 ms until it returns 0; returns how many
 * queries it issued so the phase can subtract them from its transaction count.
 */
export async function pollUntilZero(client: pg.Client, countSql: string): Promise<number> {
  const deadline = performance.now() + PHASE_TIMEOUT_MS;
  let queries = 0;
  for (;;) {
    queries++;
    const { rows } = await client.query<{ n: number }>(countSql);
    if (Number(rows[0]?.n ?? 0) === 0) return queries;
    if (performance.now() > deadline) throw new Error(`still ${rows[0]?.n} unfinished jobs after ${PHASE_TIMEOUT_MS} ms`);
    await delay(DRAIN_POLL_MS);
  }
}
