/**
 * A run listing's creation-time window as an id range. Run ids sort by creation time (core/ids.ts),
 * so `createdAfter` / `createdBefore` also bound the ids a listing can meet, and a store that
 * seeks that range (the primary key) reads only the runs near the window instead of every newer
 * or older run. The range is widened by {@link ID_TIME_SLACK_MS} because an id's time and the
 * run's `created_at` come from two reads of the clock (on PostgreSQL, two clocks: the process's
 * and the database's); the exact `created_at` condition is applied as well, so the result is the
 * window's runs unless the two clocks were further apart than the slack (`kiln doctor` fails
 * beyond 60 s).
 *
 * Driver-free: SQLite and PostgreSQL both use it.
 */
import { idTimeFloor } from '../../core/ids.ts';
import type { ListRunsQuery } from '../../core/ports/reads.ts';

/** How far an id's time may be from its run's `created_at` (see the module comment). */
export const ID_TIME_SLACK_MS = 5 * 60_000;

/** Sorts after every id (ids are ASCII). */
export const AFTER_EVERY_ID = '\u{10FFFF}';

/** The id range of a run listing: ids at or above `from`, below `before`. */
export interface RunIdRange {
  /** '' when the listing has no lower bound. */
  from: string;
  /** {@link AFTER_EVERY_ID} when the listing has no upper bound. */
  before: string;
}

/** The id range `query` can match: its `before` cursor and its creation-time window, widened by the slack. */
export function runIdRange(query: Pick<ListRunsQuery, 'before' | 'createdAfter' | 'createdBefore'>): RunIdRange {
  const from = query.createdAfter === undefined ? '' : idTimeFloor('run', query.createdAfter - ID_TIME_SLACK_MS);
  const windowEnd = query.createdBefore === undefined ? AFTER_EVERY_ID : idTimeFloor('run', query.createdBefore + ID_TIME_SLACK_MS);
  const cursor = query.before ?? AFTER_EVERY_ID;
  return { from, before: cursor < windowEnd ? cursor : windowEnd };
}
