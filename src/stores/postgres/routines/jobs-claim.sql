-- routines/jobs-claim.sql: claiming jobs from any number of queues in one statement.
--
-- Re-applied by migrate() (migrate.ts) whenever this file's sha256 changes; created with
-- `SET search_path FROM CURRENT` (the store's schema, then pg_temp; see routines/cache.sql) and
-- `SET plan_cache_mode = force_generic_plan`: planning the claim costs about as much as running
-- it, and a custom plan is never cheaper here (every pick walks an index up to a LIMIT), so it
-- is planned once per connection. The batch entry points (claim_jobs here, submit_runs,
-- commit_batch_with_publications) also run with `SET random_page_cost = 1.1`: every row they
-- touch is keyed by a job, run or request of the batch and sits in shared buffers, so a primary-key
-- probe costs a buffer hit, not the disk seek the default 4 prices it at; at 4, with a few
-- thousand live jobs, the planner hashed a seq scan of every job for a claim or commit of 10.
--
-- ready_tenants(p_queue)
--   Out: the distinct non-NULL tenants with ready jobs in the queue, by a skip-scan of
--        jobs_ready_tenant (migration 0018): one index probe per tenant, whatever the depth.
--   The one routine without `SET search_path`: a SQL function with a SET clause is never
--   inlined, and called per queue it cost a function call and a fresh plan each (0.09 ms a
--   queue, a fifth of a 5-queue claim of 50 jobs). Inlined, it is planned into claim_jobs,
--   whose own `SET search_path FROM CURRENT` resolves its tables; claim_jobs is its only caller.
--
-- claim_jobs(p_now, p_queues, p_workers, p_limits, p_lease_ms, p_tokens, p_caps)
--   In:  p_now epoch ms (NULL: the database clock); one element per request, in request order
--        (limits >= 1): queue, worker id, limit, lease ms, retry cap (NULL: none; the
--        ClaimRequest's maxRetriesRunning); p_tokens: lease tokens, at least as many as the
--        limits add up to.
--   Out: one row per claimed job, in request order then claim order: `job` (the jobs row after
--        the lease), `pos` (1-based place), `picked_state` (`leased` = an expired lease taken
--        over, a redelivery), `run` (the run row as JSON, as the statement's snapshot saw it),
--        `run_started_at` (non-NULL when this claim started the run: `run` is then `running`,
--        updated at that time), `outputs` (JSON object of the run's succeeded stages' outputs,
--        or NULL), `ledger_hit`, `ledger_output`.
--   Invariants:
--     * Claim order (JobsPort.claim): priority, then the job's rank among the candidates of its
--       tenant and priority, then available_at, id. Candidates: the first `total` ready jobs of
--       each tenant (ready_tenants() plus the tenant-less ones, read in claim order from
--       jobs_ready_untenanted, migration 0022; a job past its tenant's first
--       `total` cannot be among the first `total`), plus expired leases; under a retry cap,
--       first attempts only, plus the first `budget` retries (ready with attempt >= 1, or an
--       expired lease) in plain order, budget = cap - retries of the queue leased and unexpired.
--     * The retry cap is exact under concurrent claimers: a capped queue's claims take a
--       transaction advisory lock on it in a statement of their own, before the claim statement,
--       whose fresh snapshot (READ COMMITTED, a VOLATILE function) then counts every retry a
--       claimer that held the lock before committed.
--     * No job is handed out twice: candidates are row-locked with FOR UPDATE SKIP LOCKED (a
--       concurrent claimer skips them instead of waiting) and rechecked on their latest version.
--     * Fences come from fence_seq: strictly increasing across every process.
--     * A queue named twice is picked once with the summed limit (and the smallest cap); its
--       jobs are dealt to its requests in request order (`skip` = the limits of its earlier
--       requests).
--     * Paused queues yield nothing. Each pick stops at its limit, so the cost does not grow with
--       queue depth: ready jobs come off jobs_ready_tenant per tenant, ready retries off
--       jobs_ready_retries, expired leases off jobs_lease_expiry (usually empty). The cost grows
--       with the number of tenants with ready jobs in a requested queue (each has a head read).
--     * Locks go job first, then run, like every other operation. Stage records are not written
--       (migration 0020): a leased stage job's record reads running from the job
--       (stage_records_live); the job keeps its first claim in started_at.
--     * `outputs` are the succeeded stages as read before this statement's leases: neither a
--       stage a job of this claim runs nor one whose job was already leased (both running).
--     * `run` is read from the snapshot, not from the runs update: a CTE joined back to the
--       leased rows is planned as a nested loop (the planner cannot size either side),
--       quadratic in the batch size. The job's row lock keeps the run from changing meanwhile
--       (every writer of a run locks its live job first).
--     * No table is read whole: rows keyed by a claimed job are primary-key probes. Its run and
--       ledger entry are subqueries per leased row (no join for the planner to hash); the jobs it
--       leases are the UPDATE's join, priced by random_page_cost (see the top).

CREATE OR REPLACE FUNCTION ready_tenants(p_queue text)
RETURNS SETOF text
LANGUAGE sql STABLE
AS $$
  WITH RECURSIVE t(tenant) AS (
    (SELECT tenant FROM jobs WHERE queue = p_queue AND state = 'ready' AND tenant IS NOT NULL ORDER BY tenant LIMIT 1)
    UNION ALL
    SELECT (SELECT j.tenant FROM jobs j WHERE j.queue = p_queue AND j.state = 'ready' AND j.tenant > t.tenant ORDER BY j.tenant LIMIT 1)
    FROM t WHERE t.tenant IS NOT NULL
  )
  SELECT tenant FROM t WHERE tenant IS NOT NULL
$$;

CREATE OR REPLACE FUNCTION claim_jobs(p_now bigint, p_queues text[], p_workers text[], p_limits integer[], p_lease_ms bigint[],
                           p_tokens text[], p_caps integer[])
RETURNS TABLE (job jobs, pos bigint, picked_state text, run json, run_started_at bigint, outputs json,
               ledger_hit boolean, ledger_output json)
LANGUAGE plpgsql
SET search_path FROM CURRENT
SET plan_cache_mode = force_generic_plan
SET random_page_cost = 1.1
AS $$
#variable_conflict use_column
DECLARE
  v_now bigint := coalesce(p_now, floor(extract(epoch FROM now()) * 1000)::bigint);
BEGIN
  -- Capped queues one claimer at a time (in name order: no deadlock), before the claim's snapshot.
  PERFORM pg_advisory_xact_lock(hashtextextended('kiln.retry_cap:' || current_schema() || ':' || c.queue, 0))
  FROM (SELECT DISTINCT q.queue FROM unnest(p_queues, p_caps) AS q (queue, cap) WHERE q.cap IS NOT NULL ORDER BY q.queue) c;

  RETURN QUERY
  WITH req AS (
    SELECT r.queue, r.worker_id, r.lim, r.lease_ms, r.cap, r.ord,
      coalesce(sum(r.lim) OVER (PARTITION BY r.queue ORDER BY r.ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS skip
    FROM unnest(p_queues, p_workers, p_limits, p_lease_ms, p_caps) WITH ORDINALITY AS r (queue, worker_id, lim, lease_ms, cap, ord)
  ),
  wanted AS (
    SELECT req.queue, sum(req.lim)::int AS total, min(req.cap) AS cap FROM req
    WHERE NOT EXISTS (SELECT 1 FROM queues q WHERE q.name = req.queue AND q.paused)
    GROUP BY req.queue
  ),
  demand AS (
    -- retry_lim: how many retries may be candidates (every expired lease up to total without a cap).
    SELECT w.queue, w.total, w.cap IS NOT NULL AS capped,
      CASE WHEN w.cap IS NULL THEN w.total
        ELSE greatest(0, least(w.total, w.cap - (
          SELECT count(*) FROM jobs WHERE queue = w.queue AND state = 'leased' AND attempt >= 2 AND lease_until > v_now)))::int
      END AS retry_lim
    FROM wanted w
  ),
  heads AS (
    SELECT d.queue, j.id, j.state, j.priority, j.available_at, j.tenant
    FROM demand d CROSS JOIN LATERAL ready_tenants(d.queue) AS t (tenant) CROSS JOIN LATERAL (
      SELECT id, state, priority, available_at, tenant FROM jobs
      WHERE queue = d.queue AND state = 'ready' AND tenant = t.tenant AND available_at <= v_now AND (NOT d.capped OR attempt = 0)
      ORDER BY priority, available_at, id LIMIT d.total
      FOR UPDATE SKIP LOCKED
    ) j
    UNION ALL
    SELECT d.queue, j.id, j.state, j.priority, j.available_at, j.tenant
    FROM demand d CROSS JOIN LATERAL (
      SELECT id, state, priority, available_at, tenant FROM jobs
      WHERE queue = d.queue AND state = 'ready' AND tenant IS NULL AND available_at <= v_now AND (NOT d.capped OR attempt = 0)
      ORDER BY priority, available_at, id LIMIT d.total
      FOR UPDATE SKIP LOCKED
    ) j
  ),
  retries AS (
    SELECT d.queue, j.id, j.state, j.priority, j.available_at, j.tenant
    FROM demand d CROSS JOIN LATERAL (
      SELECT id, state, priority, available_at, tenant FROM jobs
      WHERE state = 'leased' AND lease_until <= v_now AND queue = d.queue
      ORDER BY priority, available_at, id LIMIT d.retry_lim
      FOR UPDATE SKIP LOCKED
    ) j
    UNION ALL
    SELECT d.queue, j.id, j.state, j.priority, j.available_at, j.tenant
    FROM demand d CROSS JOIN LATERAL (
      SELECT id, state, priority, available_at, tenant FROM jobs
      WHERE queue = d.queue AND state = 'ready' AND attempt >= 1 AND available_at <= v_now AND d.capped
      ORDER BY priority, available_at, id LIMIT d.retry_lim
      FOR UPDATE SKIP LOCKED
    ) j
  ),
  candidates AS (
    SELECT h.queue, h.id, h.state, h.priority, h.available_at, h.tenant FROM heads h
    UNION ALL
    SELECT r.queue, r.id, r.state, r.priority, r.available_at, r.tenant FROM (
      SELECT rt.*, row_number() OVER (PARTITION BY rt.queue ORDER BY rt.priority, rt.available_at, rt.id) AS n FROM retries rt
    ) r JOIN demand d ON d.queue = r.queue WHERE r.n <= d.retry_lim
  ),
  ranked AS (
    SELECT c.*, row_number() OVER (PARTITION BY c.queue, c.tenant, c.priority ORDER BY c.available_at, c.id) AS tenant_rank
    FROM candidates c
  ),
  picked AS (
    SELECT c.queue, c.id, c.state,
      row_number() OVER (PARTITION BY c.queue ORDER BY c.priority, c.tenant_rank, c.available_at, c.id) AS rn
    FROM ranked c
  ),
  assigned AS (
    SELECT p.id, p.state AS picked_state, r.worker_id, r.lease_ms, row_number() OVER (ORDER BY r.ord, p.rn) AS pos
    FROM picked p JOIN req r ON r.queue = p.queue AND p.rn > r.skip AND p.rn <= r.skip + r.lim
  ),
  leased AS (
    UPDATE jobs j SET state = 'leased', attempt = j.attempt + 1,
      redeliveries = j.redeliveries + CASE WHEN a.picked_state = 'leased' THEN 1 ELSE 0 END,
      lease_owner = a.worker_id, lease_token = p_tokens[a.pos], fence = nextval('fence_seq'),
      lease_until = v_now + a.lease_ms, lease_ms = a.lease_ms, started_at = coalesce(j.started_at, v_now)
    FROM assigned a WHERE j.id = a.id
    RETURNING j AS job, j.run_id, j.stage, j.kind, j.idempotency_key, a.pos, a.picked_state
  ),
  claimed AS MATERIALIZED (
    -- Each job with its run as the statement's snapshot saw it (a probe per row, see the header).
    SELECT l.*, (SELECT r FROM runs r WHERE r.id = l.run_id) AS run FROM leased l
  ),
  started AS (
    -- Only a run's first claim finds it queued: later stages skip the write. The runs to start
    -- come from `claimed` (a filter on its rows, not on runs), and the recheck against the latest
    -- version is a join clause: a constant `status = 'queued'` on runs would let the planner
    -- drive the update from runs_in_flight, and with statistics from before a burst of
    -- submissions (which say almost no run is queued) it does, reading every in-flight run for
    -- every claimed one.
    UPDATE runs r SET status = 'running', updated_at = v_now
    FROM (SELECT DISTINCT (c.run).id, (c.run).status FROM claimed c WHERE (c.run).status = 'queued') q (id, status)
    WHERE r.id = q.id AND r.status = q.status
  )
  SELECT c.job, c.pos, c.picked_state, row_to_json(c.run), CASE WHEN (c.run).status = 'queued' THEN v_now END,
    -- Read before this statement's own updates: the stage a claimed job runs is not an output
    -- (it is running now), even when a duplicate of it succeeded before.
    -- stage_records_live's rule for one record, spelled out as a probe of its live job (the view
    -- joins every record of the run to the run's jobs: 16 µs a claimed job; a NOT EXISTS was
    -- planned as an anti join hashing every job): a succeeded record whose job is leased is running.
    (SELECT json_object_agg(st.stage, st.output) FROM stage_records st
     WHERE st.run_id = c.run_id AND st.status = 'succeeded' AND NOT (c.kind = 'stage' AND st.stage = c.stage)
       AND (SELECT j.state FROM jobs j
            WHERE j.run_id = st.run_id AND j.stage = st.stage AND j.kind = 'stage' AND j.state <> 'dead' LIMIT 1)
           IS DISTINCT FROM 'leased'),
    lg.hit IS NOT NULL, lg.output
  FROM claimed c
  LEFT JOIN LATERAL (
    SELECT true AS hit, x.output FROM ledger x WHERE x.run_id = c.run_id AND x.key = c.idempotency_key LIMIT 1
  ) lg ON true
  ORDER BY c.pos;
END
$$;
