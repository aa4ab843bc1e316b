/**
 * The SQL of the `artifactRefs` sub-port: where artifact refs may sit. Each statement returns one
 * TEXT column (read plucked) for `artifact-refs.ts` to scan with the shared pattern; SQLite has
 * no regular expressions of its own. `instr` (case-sensitive, unlike LIKE) skips values that
 * cannot hold a ref without handing their text over.
 */
import { REPLAYABLE_RUN_STATUSES } from '../../shared/artifact-refs.ts';
import type { SqliteDatabase } from '../connection.ts';

/** `'queued', 'running', ...`: literals (fixed, from code), so the statement has no list parameter. */
const REPLAYABLE = REPLAYABLE_RUN_STATUSES.map((status) => `'${status}'`).join(', ');

/** Out: the artifact of every publication (a scan; the caller's set keeps each once). */
export const SELECT_PUBLISHED_ARTIFACT_REFS = 'SELECT artifact_ref FROM publications';

/** Out: the value JSON of every cache entry (any status) that may hold a ref. Scans cache_entries. */
export const SELECT_CACHE_VALUES_WITH_REFS = "SELECT value FROM cache_entries WHERE instr(value, 'sha256:') > 0";

/**
 * Out: the input JSON and the stage output JSON of every run that may still run or be replayed
 * (REPLAYABLE_RUN_STATUSES), where they may hold a ref. Scans runs (queued and running runs have
 * no index of their own: the reaper's cost, kept off the hot path); CROSS JOIN fixes the join
 * order (SQLite never reorders it), so stage records are found by key for those runs only rather
 * than all scanned.
 */
export const SELECT_REPLAYABLE_RUN_JSON = `
  SELECT input FROM runs WHERE status IN (${REPLAYABLE}) AND instr(input, 'sha256:') > 0
  UNION ALL
  SELECT s.output FROM runs AS r CROSS JOIN stage_records AS s ON s.run_id = r.id
  WHERE r.status IN (${REPLAYABLE}) AND instr(s.output, 'sha256:') > 0`;

/** Prepares the statements of the artifact ref scan; the schema must be migrated first. */
export function prepareArtifactRefsStatements(db: SqliteDatabase) {
  // Plucked: each row is its one TEXT column.
  return {
    selectPublishedArtifactRefs: db.prepare<[], string>(SELECT_PUBLISHED_ARTIFACT_REFS).pluck(),
    selectCacheValuesWithRefs: db.prepare<[], string>(SELECT_CACHE_VALUES_WITH_REFS).pluck(),
    selectReplayableRunJson: db.prepare<[], string>(SELECT_REPLAYABLE_RUN_JSON).pluck(),
  };
}
