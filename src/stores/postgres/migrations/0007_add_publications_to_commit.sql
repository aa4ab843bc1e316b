-- 0007_add_publications_to_commit: completions set publications in their commit.
--
-- Changes: publications keys become COLLATE "C" (like every id and key, see 0001); type
-- commit_item gets `publish` (a JSON array of publication_request objects, or NULL for none);
-- creates type publication_request (subject_id, profile, artifact_ref, subject_version).
-- The commit functions' results gained a column here (publications_refused, and `fence` for
-- complete_distinct_items), which CREATE OR REPLACE cannot do: their older forms are dropped, so
-- that routines/jobs-commit.sql creates them anew. commit_batch is dropped for good: its
-- successor, commit_batch_with_publications, has another name so that a process still calling
-- commit_batch with three result columns fails ("function does not exist") rather than taking the
-- fourth column for its ordinality. The functions live in routines/ (jobs-commit.sql,
-- publications.sql), applied by migrate() after the migrations.
-- Append-only: change these objects in a later migration.

ALTER TABLE publications
  ALTER COLUMN subject_id TYPE text COLLATE "C",
  ALTER COLUMN profile TYPE text COLLATE "C";

CREATE TYPE publication_request AS (
  subject_id      text COLLATE "C",
  profile         text COLLATE "C",
  artifact_ref    text,
  subject_version bigint
);

ALTER TYPE commit_item ADD ATTRIBUTE publish json;

DROP FUNCTION IF EXISTS commit_batch(json, bigint, text, text[]);
DROP FUNCTION IF EXISTS commit_items(json, bigint, text, text[]);
DROP FUNCTION IF EXISTS complete_distinct_items(commit_item[], bigint, text);
DROP FUNCTION IF EXISTS complete_item(commit_item, bigint, text);
