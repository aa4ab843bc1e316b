-- 0018_add_fair_claim_indexes: indexes of the fair claim (JobsPort.claim: round-robin across
-- tenants within a priority) and of the per-queue cap on retries running at once.
--
-- Runs with search_path set to the store's schema (see 0001).
-- Replaces: jobs_ready (queue, priority, available_at, id) by jobs_ready_tenant (queue, tenant,
--   priority, available_at, id), which serves the claim twice: the distinct tenants with ready
--   jobs of a queue by a skip-scan (one probe each, ready_tenants() in routines/jobs-claim.sql),
--   then the head of each tenant in claim order.
-- Creates: jobs_ready_retries, ready jobs past their first attempt (attempt >= 1) in plain order:
--   under a retry cap the claim takes the first few of them; usually small.
--   jobs_retries_running, leased jobs past their first attempt (attempt >= 2 once claimed) by
--   lease end: the claim counts those still leased to know how many more retries may start.
-- Drops: claim_jobs of six arguments; routines/jobs-claim.sql creates it with the retry caps.
-- Append-only once released: change these objects in a later migration.

DROP FUNCTION IF EXISTS claim_jobs(bigint, text[], text[], integer[], bigint[], text[]);
DROP INDEX jobs_ready;
CREATE INDEX jobs_ready_tenant ON jobs (queue, tenant, priority, available_at, id) WHERE state = 'ready';
CREATE INDEX jobs_ready_retries ON jobs (queue, priority, available_at, id) WHERE state = 'ready' AND attempt >= 1;
CREATE INDEX jobs_retries_running ON jobs (queue, lease_until) WHERE state = 'leased' AND attempt >= 2;
