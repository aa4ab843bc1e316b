-- 0022_add_untenanted_ready_index: the claim reads the head of a queue's jobs without a tenant
-- in claim order from an index, instead of reading every such ready job and sorting them.
--
-- Runs with search_path set to the store's schema (see 0001).
-- Why: the claim's tenant-less branch (routines/jobs-claim.sql, `tenant IS NULL`) could only use
--   jobs_ready_tenant (0018) with `tenant IS NULL` as a condition, and PostgreSQL does not take
--   an IS NULL condition as fixing the column for ordering: every claim read all ready jobs of
--   the queue and sorted them before the LIMIT, so with a backlog each claim cost grew with it
--   (5,000 pre-filled jobs: ~5,000 buffers per claim of 500, issue 13).
-- Creates: jobs_ready_untenanted, ready jobs without a tenant in claim order (priority,
--   available_at, id) per queue. The claim statement's condition implies its predicate, so the
--   head is the index's first `limit` live entries.
-- Append-only once released: change these objects in a later migration.

CREATE INDEX jobs_ready_untenanted ON jobs (queue, priority, available_at, id) WHERE state = 'ready' AND tenant IS NULL;
