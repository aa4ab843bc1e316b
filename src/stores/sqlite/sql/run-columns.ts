/**
 * A run as read. A completion that moves a run to its next stage writes no run row (one row write
 * fewer per stage transition): its current stage and last change are read from its jobs instead,
 * exactly as that write would have set them. Every other move writes the run row, with its current
 * stage as read at that moment (TOUCH_RUN derives it; the others write a row read through
 * runColumns; a run's first claim leaves it, a queued run being at its first stage), so the
 * column is right as of the row's last write, and only a later plain advance can have moved the
 * run on; such an advance enqueues the next stage's job at the instant it moves:
 *  - `current_stage`: NULL once the run has ended (every move that ends a run writes NULL);
 *    otherwise the stage of its newest stage job enqueued at or after the row's last write (a
 *    plain advance since), else the column (which a move may have set to a compensation's stage:
 *    a resumed compensation, say).
 *  - `updated_at`: the later of the column and the newest enqueue of any of its jobs; the column
 *    alone once the run has ended (its end wrote it last).
 * Both subqueries walk jobs_run_key (0001), led by run_id: a run has one or two jobs. Neither runs
 * for a run that has ended (current_stage NULL), the most of any listing.
 */
import { RUN_COLUMN_NAMES } from '../rows.ts';

/** The current stage of the run of table alias `r`, as read (see above). */
export function currentStageOf(r: string): string {
  return `CASE WHEN ${r}.current_stage IS NULL THEN NULL ELSE COALESCE(
      (SELECT cj.stage FROM jobs AS cj WHERE cj.run_id = ${r}.id AND cj.kind = 'stage' AND cj.enqueued_at >= ${r}.updated_at
        ORDER BY cj.enqueued_at DESC, cj.id DESC LIMIT 1),
      ${r}.current_stage) END`;
}

/** The last change of the run of table alias `r`, as read (see above). */
function updatedAtOf(r: string): string {
  return `CASE WHEN ${r}.current_stage IS NULL THEN ${r}.updated_at
      ELSE max(${r}.updated_at, coalesce((SELECT max(uj.enqueued_at) FROM jobs AS uj WHERE uj.run_id = ${r}.id), 0)) END`;
}

/** Every column of `runs` (RUN_COLUMN_NAMES, in its order), from table alias `r`, as a run is read (see above). */
export function runColumns(r: string): string {
  const derived: Partial<Record<(typeof RUN_COLUMN_NAMES)[number], string>> = { current_stage: currentStageOf(r), updated_at: updatedAtOf(r) };
  return RUN_COLUMN_NAMES.map((name) => {
    const expression = derived[name];
    return expression === undefined ? `${r}.${name}` : `${expression} AS ${name}`;
  }).join(', ');
}
