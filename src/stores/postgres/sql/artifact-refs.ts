/**
 * The statement of the `artifactRefs` sub-port: every artifact ref something in the store may
 * still read, for garbage collection. One statement, so one snapshot of every table it reads.
 */
import { REPLAYABLE_RUN_STATUSES } from '../../shared/artifact-refs.ts';
import { statement, type Statement } from '../database.ts';

/** `'queued', 'running', ...`: literals (fixed, from code), so the planner sees the statuses. */
const REPLAYABLE = REPLAYABLE_RUN_STATUSES.map((status) => `'${status}'`).join(', ');

/**
 * In: the ref pattern (`ARTIFACT_REF_PATTERN`, an ARE). Out: `ref` rows, unique, in byte order:
 * the artifact of every publication, and every match of the pattern in the JSON text of cache
 * entry values (any status) and of the input and stage outputs of runs that may still run or be
 * replayed. `json` keeps the text as written, so the matches are those of the other stores.
 * Scans cache_entries and runs (queued and running runs have no index of their own: the
 * reaper's cost, kept off the hot path); stage records by key.
 */
export const listReferencedArtifacts = (s: string): Statement =>
  statement(
    'list_referenced_artifacts',
    `
WITH replayable AS (
  SELECT id, input FROM ${s}.runs WHERE status IN (${REPLAYABLE})
),
docs AS (
  SELECT value::text AS doc FROM ${s}.cache_entries WHERE value IS NOT NULL
  UNION ALL
  SELECT input::text FROM replayable
  UNION ALL
  SELECT st.output::text FROM replayable AS r JOIN ${s}.stage_records AS st ON st.run_id = r.id
  WHERE st.output IS NOT NULL
)
SELECT ref FROM (
  SELECT artifact_ref AS ref FROM ${s}.publications
  UNION
  SELECT m[1] FROM docs, regexp_matches(docs.doc, $1::text, 'g') AS m
  WHERE strpos(docs.doc, 'sha256:') > 0
) AS refs
ORDER BY ref COLLATE "C"`,
  );
