-- 0007_add_trace_parent_to_runs: the trace context a run's jobs continue.
--
-- Adds: column runs.trace_parent (TEXT, NULL for runs stored before this migration).
-- Invariants:
--   * trace_parent is the W3C `traceparent` of the span that submitted the run
--     (`00-<32 hex trace id>-<16 hex span id>-<2 hex flags>`), written once at submit and never
--     changed. Every attempt of every job of the run, in any process, starts its span as a child
--     of it, so retries, redeliveries and later stages join the trace of the request.
--   * When set, its trace id equals runs.trace_id. Jobs keep only trace_id: a claim reads the run.
-- Append-only once released: add 0008_... instead of editing this file.

ALTER TABLE runs ADD COLUMN trace_parent TEXT;
