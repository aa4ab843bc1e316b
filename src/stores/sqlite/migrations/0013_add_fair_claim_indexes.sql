-- 0013_add_fair_claim_indexes: indexes of the fair claim (JobsPort.claim: round-robin across
-- tenants within a priority) and of the per-queue cap on retries running at once.
--
-- Replaces: jobs_ready (queue, priority, available_at) by jobs_ready_tenant (queue, tenant,
--   priority, available_at), which serves the claim twice: the distinct tenants with ready jobs
--   of a queue by a skip-scan (one seek each), then the head of each tenant in claim order. The
--   queue-wide readers of jobs_ready (queue stats, ready ages) count over it the same way.
-- Creates: jobs_ready_retries, ready jobs past their first attempt (attempt >= 1) in plain order:
--   with a retry cap the claim takes the first few of them; usually small.
--   jobs_retries_running, leased jobs past their first attempt (attempt >= 2 once claimed) by
--   lease end: the claim counts those still leased to know how many more retries may start.
-- Append-only once released: add 0014_... instead of editing this file.

DROP INDEX jobs_ready;
CREATE INDEX jobs_ready_tenant ON jobs (queue, tenant, priority, available_at) WHERE state = 'ready';
CREATE INDEX jobs_ready_retries ON jobs (queue, priority, available_at) WHERE state = 'ready' AND attempt >= 1;
CREATE INDEX jobs_retries_running ON jobs (queue, lease_until) WHERE state = 'leased' AND attempt >= 2;
