/**
 * A run as read. A completion that moves a run to its next stage writes no run row (one row write
 * fewer per stage transition): the run's current stage and last change are read from its jobs
 * instead, exactly as the moves that write them would have set them, since every job is enqueued
 * in the transaction that moves its run:
 *  - `current_stage`: NULL once the run has ended (every move that ends a run writes NULL);
 *    otherwise the stage of its newest stage job (the job the chain is at; parked and dead ones
 *    stay until replayed or the run ends), else the column (a run with no stage job left).
 *  - `updated_at`: the later of the column (written by every move that is not a plain advance:
 *    start, retry, park, fail, compensation, operator moves, the end) and the newest enqueue of
 *    any of its jobs (a plain advance enqueues the next stage's job at the instant it moves); the
 *    column alone once the run has ended (its end wrote it last).
 * Both subqueries walk jobs_run_key (0001), led by run_id: a run has one or two jobs. Neither runs
 * for a run that has ended (current_stage NULL), the most of any listing.
 */

/** The current stage of the run of table alias `r`, as read (see above). */
export function currentStageOf(r: string): string {
  return `CASE WHEN ${r}.current_stage IS NULL THEN NULL ELSE COALESCE(
      (SELECT cj.stage FROM jobs AS cj WHERE cj.run_id = ${r}.id AND cj.kind = 'stage' ORDER BY cj.enqueued_at DESC, cj.id DESC LIMIT 1),
      ${r}.current_stage) END`;
}

/** Every column of `runs`, from table alias `r`, as a run is read (see above). */
export function runColumns(r: string): string {
  return `${r}.id, ${r}.pipeline, ${r}.pipeline_version, ${r}.status, ${currentStageOf(r)} AS current_stage,
    ${r}.input, ${r}.input_checksum, ${r}.idempotency_key, ${r}.subject_id, ${r}.subject_version, ${r}.tenant, ${r}.trace_id,
    ${r}.trace_parent, ${r}.error, ${r}.created_at,
    CASE WHEN ${r}.current_stage IS NULL THEN ${r}.updated_at
      ELSE max(${r}.updated_at, coalesce((SELECT max(uj.enqueued_at) FROM jobs AS uj WHERE uj.run_id = ${r}.id), 0)) END AS updated_at,
    ${r}.finished_at`;
}
