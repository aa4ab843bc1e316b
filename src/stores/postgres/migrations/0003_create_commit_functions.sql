-- 0003_create_commit_functions: the commit batch's item type.
--
-- Creates: type commit_item, one item of a commit batch (its fields: routines/jobs-commit.sql).
-- The functions this migration created now live in routines/ (jobs-commit.sql, jobs-leases.sql),
-- applied by migrate() after the migrations.
-- Append-only: change this type in a later migration.

CREATE TYPE commit_item AS (
  type                 text,             -- complete | fail
  job_id               text,
  token                text,
  output               text,             -- complete: the output as JSON text
  duration_ms          double precision,
  error                text,             -- fail: the error record as JSON text
  action               text,             -- fail: retry | park | dead_letter
  delay_ms             bigint,           -- fail + retry
  enqueue_id           text,             -- the job to enqueue (complete: next; dead_letter: rollback), or NULL
  enqueue_stage        text,
  enqueue_queue        text,
  enqueue_kind         text,
  enqueue_key          text,             -- idempotency key with the run id placeholder
  enqueue_max_attempts integer,
  enqueue_priority     integer
);

