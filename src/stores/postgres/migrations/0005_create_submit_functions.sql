-- 0005_create_submit_functions: the submission batch's request type.
--
-- Creates: type submit_request, one request of a submission batch without subjects (see
-- routines/jobs-submit.sql). The functions this migration created now live in
-- routines/jobs-submit.sql, applied by migrate() after the migrations.
-- Append-only: change this type in a later migration.

CREATE TYPE submit_request AS (
  run_id           text,
  job_id           text,
  pipeline         text,
  pipeline_version integer,
  input            text,     -- the input as JSON text, stored verbatim
  input_checksum   text,
  idempotency_key  text,
  tenant           text,
  trace_id         text,
  stages           text[],
  first_stage      text,
  first_queue      text,
  first_kind       text,
  first_key        text,     -- the first job's idempotency key (core/keys.ts)
  max_attempts     integer,
  priority         integer
);
