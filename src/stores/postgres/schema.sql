-- The schema of a freshly migrated PostgreSQL store, as pg_dump prints it (schema renamed kiln,
-- session settings dropped, each function body replaced by its sha256: the text is in routines/).
-- Generated: npm run schema:postgres (test/support/postgres-schema.ts). Do not edit.

--
-- PostgreSQL database dump
--

--
-- Name: kiln; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA kiln;

--
-- Name: commit_item; Type: TYPE; Schema: kiln; Owner: -
--

CREATE TYPE kiln.commit_item AS (
	type text,
	job_id text,
	token text,
	output text,
	duration_ms double precision,
	error text,
	action text,
	delay_ms bigint,
	enqueue_id text,
	enqueue_stage text,
	enqueue_queue text,
	enqueue_kind text,
	enqueue_key text,
	enqueue_max_attempts integer,
	enqueue_priority integer,
	publish json,
	lock_key text COLLATE pg_catalog."C",
	lock_fence bigint
);

--
-- Name: publication_request; Type: TYPE; Schema: kiln; Owner: -
--

CREATE TYPE kiln.publication_request AS (
	subject_id text COLLATE pg_catalog."C",
	profile text COLLATE pg_catalog."C",
	artifact_ref text,
	subject_version bigint
);

--
-- Name: submit_request; Type: TYPE; Schema: kiln; Owner: -
--

CREATE TYPE kiln.submit_request AS (
	run_id text,
	job_id text,
	pipeline text,
	pipeline_version integer,
	input text,
	input_checksum text,
	idempotency_key text,
	tenant text,
	trace_id text,
	stages text[],
	first_stage text,
	first_queue text,
	first_kind text,
	first_key text,
	max_attempts integer,
	priority integer,
	trace_parent text
);

--
-- Name: cache_entries; Type: TABLE; Schema: kiln; Owner: -
--

CREATE TABLE kiln.cache_entries (
    cache text NOT NULL COLLATE pg_catalog."C",
    key text NOT NULL COLLATE pg_catalog."C",
    status text NOT NULL,
    value json,
    error json,
    builder_owner text,
    builder_token text COLLATE pg_catalog."C",
    builder_fence bigint,
    builder_until bigint,
    expires_at bigint,
    stale_until bigint,
    updated_at bigint NOT NULL,
    purge_at bigint GENERATED ALWAYS AS (
CASE status
    WHEN 'building'::text THEN builder_until
    WHEN 'failed'::text THEN expires_at
    ELSE GREATEST(COALESCE(stale_until, expires_at), builder_until)
END) STORED,
    CONSTRAINT cache_entries_check CHECK ((((builder_token IS NULL) = (builder_owner IS NULL)) AND ((builder_token IS NULL) = (builder_fence IS NULL)) AND ((builder_token IS NULL) = (builder_until IS NULL)))),
    CONSTRAINT cache_entries_check1 CHECK (((status <> 'building'::text) OR ((builder_token IS NOT NULL) AND (expires_at IS NULL) AND (stale_until IS NULL)))),
    CONSTRAINT cache_entries_check2 CHECK (((status <> 'failed'::text) OR ((builder_token IS NULL) AND (expires_at IS NOT NULL)))),
    CONSTRAINT cache_entries_check3 CHECK (((status <> 'ready'::text) OR ((value IS NOT NULL) AND (expires_at IS NOT NULL)))),
    CONSTRAINT cache_entries_status_check CHECK ((status = ANY (ARRAY['building'::text, 'ready'::text, 'failed'::text])))
);

--
-- Name: acquire_cache_entry(text, text, text, text, bigint, bigint); Type: FUNCTION; Schema: kiln; Owner: -
--

CREATE FUNCTION kiln.acquire_cache_entry(p_cache text, p_key text, p_owner text, p_token text, p_lease_ms bigint, p_now bigint, OUT state text, OUT revalidate boolean, OUT entry kiln.cache_entries) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'kiln', 'pg_temp'
    AS $$-- sha256:db0c1cab3646373f17988c6da9bf4a86e9217754d818446c49f3e34f33ff4845$$;

--
-- Name: locks; Type: TABLE; Schema: kiln; Owner: -
--

CREATE TABLE kiln.locks (
    key text NOT NULL COLLATE pg_catalog."C",
    owner text NOT NULL,
    token text NOT NULL,
    fence bigint NOT NULL,
    acquired_at bigint NOT NULL,
    expires_at bigint NOT NULL
);

--
-- Name: acquire_lock(text, text, text, bigint, bigint); Type: FUNCTION; Schema: kiln; Owner: -
--

CREATE FUNCTION kiln.acquire_lock(p_key text, p_owner text, p_token text, p_ttl_ms bigint, p_now bigint, OUT acquired boolean, OUT entry kiln.locks) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'kiln', 'pg_temp'
    AS $$-- sha256:a1f47b1d28ae00bb27e8ebc2dbe983dec93e0ffd7f7c61336a7ead93ab877b56$$;

--
-- Name: apply_publications(json, bigint, bigint, text, bigint); Type: FUNCTION; Schema: kiln; Owner: -
--

CREATE FUNCTION kiln.apply_publications(p_publish json, p_fence bigint, p_now bigint, p_lock_key text, p_lock_fence bigint) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'kiln', 'pg_temp'
    AS $$-- sha256:0ea2d99dbd34f16d7f9890845d5984ed8bc9bb0814a244d894805aa2f11db949$$;

--
-- Name: cache_decision(kiln.cache_entries, bigint); Type: FUNCTION; Schema: kiln; Owner: -
--

CREATE FUNCTION kiln.cache_decision(p_entry kiln.cache_entries, p_now bigint) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$-- sha256:cd861ba51559473b9e8e44a1df0790893ce6e7e7b0d3c761072596d5ce902b09$$;

--
-- Name: jobs; Type: TABLE; Schema: kiln; Owner: -
--

CREATE TABLE kiln.jobs (
    id text NOT NULL COLLATE pg_catalog."C",
    run_id text NOT NULL COLLATE pg_catalog."C",
    pipeline text NOT NULL,
    stage text NOT NULL,
    queue text NOT NULL COLLATE pg_catalog."C",
    kind text NOT NULL,
    state text NOT NULL,
    idempotency_key text NOT NULL COLLATE pg_catalog."C",
    attempt integer DEFAULT 0 NOT NULL,
    max_attempts integer NOT NULL,
    priority integer NOT NULL,
    available_at bigint NOT NULL,
    enqueued_at bigint NOT NULL,
    tenant text,
    trace_id text,
    lease_owner text,
    lease_token text,
    fence bigint,
    lease_until bigint,
    lease_ms bigint,
    redeliveries integer DEFAULT 0 NOT NULL,
    last_error json,
    lock_wait_since bigint,
    started_at bigint,
    CONSTRAINT jobs_kind_check CHECK ((kind = ANY (ARRAY['stage'::text, 'rollback'::text]))),
    CONSTRAINT jobs_state_check CHECK ((state = ANY (ARRAY['ready'::text, 'leased'::text, 'parked'::text, 'dead'::text])))
);

--
-- Name: claim_jobs(bigint, text[], text[], integer[], bigint[], text[], integer[]); Type: FUNCTION; Schema: kiln; Owner: -
--

CREATE FUNCTION kiln.claim_jobs(p_now bigint, p_queues text[], p_workers text[], p_limits integer[], p_lease_ms bigint[], p_tokens text[], p_caps integer[]) RETURNS TABLE(job kiln.jobs, pos bigint, picked_state text, run json, run_started_at bigint, outputs json, ledger_hit boolean, ledger_output json)
    LANGUAGE plpgsql
    SET search_path TO 'kiln', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    SET random_page_cost TO '1.1'
    AS $$-- sha256:f9177d236bb27b18c3e60356585526ab9b8ea00fbda8b08d481b116db3eda143$$;

--
-- Name: commit_batch_with_publications(json, bigint, text, text[]); Type: FUNCTION; Schema: kiln; Owner: -
--

CREATE FUNCTION kiln.commit_batch_with_publications(p_items json, p_now bigint, p_channel text, p_park_from text[]) RETURNS TABLE(outcome text, run_status text, woken_queue text, publications_refused integer)
    LANGUAGE plpgsql
    SET search_path TO 'kiln', 'pg_temp'
    SET random_page_cost TO '1.1'
    AS $$-- sha256:f8d3d01cb066ab78e1c9aa19a094dfa1971ca2b671b5206c85ff2c4c0944d005$$;

--
-- Name: commit_items(json, bigint, text, text[]); Type: FUNCTION; Schema: kiln; Owner: -
--

CREATE FUNCTION kiln.commit_items(p_items json, p_now bigint, p_channel text, p_park_from text[]) RETURNS TABLE(outcome text, run_status text, woken_queue text, publications_refused integer)
    LANGUAGE plpgsql
    SET search_path TO 'kiln', 'pg_temp'
    AS $$-- sha256:2b99b54bc38227fff448c7741bbde4ec1d2db6fdf4c9b0d07f6e115de7895a4f$$;

--
-- Name: complete_distinct_items(kiln.commit_item[], bigint, text); Type: FUNCTION; Schema: kiln; Owner: -
--

CREATE FUNCTION kiln.complete_distinct_items(p_items kiln.commit_item[], p_now bigint, p_channel text) RETURNS TABLE(outcome text, run_status text, woken_queue text, fence bigint)
    LANGUAGE plpgsql
    SET search_path TO 'kiln', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$-- sha256:af6c642c50557c459b0b0815cb121113bb37a88ff3e5adf149840d24cf8ec05a$$;

--
-- Name: complete_item(kiln.commit_item, bigint, text); Type: FUNCTION; Schema: kiln; Owner: -
--

CREATE FUNCTION kiln.complete_item(p_item kiln.commit_item, p_now bigint, p_channel text, OUT outcome text, OUT run_status text, OUT woken_queue text, OUT publications_refused integer) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'kiln', 'pg_temp'
    AS $$-- sha256:d1d8779fe1a5b2a4cec1da4ccd054a43844d3b90ce258e8a8c1a67c440b829e3$$;

--
-- Name: enqueue_job(kiln.commit_item, text, text, text, text, bigint, text); Type: FUNCTION; Schema: kiln; Owner: -
--

CREATE FUNCTION kiln.enqueue_job(p_item kiln.commit_item, p_run_id text, p_pipeline text, p_tenant text, p_trace_id text, p_now bigint, p_channel text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'kiln', 'pg_temp'
    AS $$-- sha256:f808c4f5733cbdc70f3b927a97f63d0643e305792f1d67abc2c0bc3a99fa86d1$$;

--
-- Name: fail_item(kiln.commit_item, bigint, text, text[]); Type: FUNCTION; Schema: kiln; Owner: -
--

CREATE FUNCTION kiln.fail_item(p_item kiln.commit_item, p_now bigint, p_channel text, p_park_from text[], OUT outcome text, OUT run_status text, OUT woken_queue text) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'kiln', 'pg_temp'
    AS $$-- sha256:8e8ddbe705d68ce250a62a9cadadda5742741690539cf1748b108d816196340e$$;

--
-- Name: lease_refusal(text); Type: FUNCTION; Schema: kiln; Owner: -
--

CREATE FUNCTION kiln.lease_refusal(p_job_id text) RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO 'kiln', 'pg_temp'
    AS $$-- sha256:a2c002c83edb801277ad681d131eba1268cdc820f4613883b6cd1ccece0d960d$$;

--
-- Name: lock_fence_is_current(text, bigint); Type: FUNCTION; Schema: kiln; Owner: -
--

CREATE FUNCTION kiln.lock_fence_is_current(p_key text, p_fence bigint) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO 'kiln', 'pg_temp'
    AS $$-- sha256:186fa7b55a336bca0ad59465c358f4b0c8f5729ff84e2af01234cf90e4167a1a$$;

--
-- Name: ready_tenants(text); Type: FUNCTION; Schema: kiln; Owner: -
--

CREATE FUNCTION kiln.ready_tenants(p_queue text) RETURNS SETOF text
    LANGUAGE sql STABLE
    AS $$-- sha256:005daaf38a105311fc7460123165c01f3855efd74bb449efe68ae89442fafc7f$$;

--
-- Name: request_records; Type: TABLE; Schema: kiln; Owner: -
--

CREATE TABLE kiln.request_records (
    scope text NOT NULL COLLATE pg_catalog."C",
    key text NOT NULL COLLATE pg_catalog."C",
    request_hash text NOT NULL,
    value json NOT NULL,
    created_at bigint NOT NULL
);

--
-- Name: remember_request(text, text, text, json, bigint); Type: FUNCTION; Schema: kiln; Owner: -
--

CREATE FUNCTION kiln.remember_request(p_scope text, p_key text, p_hash text, p_value json, p_now bigint, OUT created boolean, OUT stored kiln.request_records) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'kiln', 'pg_temp'
    AS $$-- sha256:92ab7f29ae6a3775d4b546b135f059de025aa123c283ae68a19c3ae1459e5217$$;

--
-- Name: submit_firsts(kiln.submit_request[]); Type: FUNCTION; Schema: kiln; Owner: -
--

CREATE FUNCTION kiln.submit_firsts(p_reqs kiln.submit_request[]) RETURNS TABLE(ord bigint, run_id text, pipeline text, pipeline_version integer, input text, input_checksum text, idempotency_key text, tenant text, trace_id text, trace_parent text, first_stage text, first_run_id text, first_checksum text)
    LANGUAGE sql IMMUTABLE
    AS $$-- sha256:dec1c0a30853e0c78bed9948becdb35219a3169bad7fe6cd4ebcbc8de2479f04$$;

--
-- Name: submit_runs(json, bigint, text); Type: FUNCTION; Schema: kiln; Owner: -
--

CREATE FUNCTION kiln.submit_runs(p_requests json, p_now bigint, p_channel text) RETURNS TABLE(ord bigint, created boolean, run json)
    LANGUAGE plpgsql
    SET search_path TO 'kiln', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    SET random_page_cost TO '1.1'
    AS $$-- sha256:bfb28c8e55490f117d75ce0f801c70f40ab4363d21908da0b3ab90f191c07a3b$$;

--
-- Name: api_tokens; Type: TABLE; Schema: kiln; Owner: -
--

CREATE TABLE kiln.api_tokens (
    id text NOT NULL COLLATE pg_catalog."C",
    tenant text NOT NULL,
    name text,
    scopes text NOT NULL,
    secret_hash text NOT NULL COLLATE pg_catalog."C",
    last4 text NOT NULL,
    created_at bigint NOT NULL,
    expires_at bigint,
    revoked_at bigint,
    CONSTRAINT api_tokens_scopes_check CHECK ((scopes <> ''::text))
);

--
-- Name: blobs; Type: TABLE; Schema: kiln; Owner: -
--

CREATE TABLE kiln.blobs (
    ref text NOT NULL COLLATE pg_catalog."C",
    media_type text NOT NULL,
    size integer NOT NULL,
    bytes bytea NOT NULL,
    modified_at bigint NOT NULL
);

--
-- Name: failed_attempts; Type: TABLE; Schema: kiln; Owner: -
--

CREATE TABLE kiln.failed_attempts (
    run_id text NOT NULL COLLATE pg_catalog."C",
    seq integer NOT NULL,
    job_id text NOT NULL COLLATE pg_catalog."C",
    stage text NOT NULL,
    kind text NOT NULL,
    queue text NOT NULL COLLATE pg_catalog."C",
    attempt integer NOT NULL,
    worker text,
    action text NOT NULL,
    error json NOT NULL,
    duration_ms double precision NOT NULL,
    failed_at bigint NOT NULL,
    CONSTRAINT failed_attempts_action_check CHECK ((action = ANY (ARRAY['retry'::text, 'park'::text, 'dead_letter'::text, 'fail'::text]))),
    CONSTRAINT failed_attempts_kind_check CHECK ((kind = ANY (ARRAY['stage'::text, 'rollback'::text])))
);

--
-- Name: fence_seq; Type: SEQUENCE; Schema: kiln; Owner: -
--

CREATE SEQUENCE kiln.fence_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: ledger; Type: TABLE; Schema: kiln; Owner: -
--

CREATE TABLE kiln.ledger (
    run_id text NOT NULL COLLATE pg_catalog."C",
    key text NOT NULL COLLATE pg_catalog."C",
    seq integer NOT NULL,
    stage text NOT NULL,
    kind text NOT NULL,
    output json NOT NULL,
    completed_at bigint NOT NULL,
    CONSTRAINT ledger_kind_check CHECK ((kind = ANY (ARRAY['stage'::text, 'rollback'::text])))
);

--
-- Name: publications; Type: TABLE; Schema: kiln; Owner: -
--

CREATE TABLE kiln.publications (
    subject_id text NOT NULL COLLATE pg_catalog."C",
    profile text NOT NULL COLLATE pg_catalog."C",
    artifact_ref text NOT NULL,
    subject_version bigint NOT NULL,
    fence bigint NOT NULL,
    updated_at bigint NOT NULL
);

--
-- Name: queue_activity; Type: TABLE; Schema: kiln; Owner: -
--

CREATE TABLE kiln.queue_activity (
    minute_at bigint NOT NULL,
    queue text NOT NULL COLLATE pg_catalog."C",
    completed bigint DEFAULT 0 NOT NULL,
    failed bigint DEFAULT 0 NOT NULL,
    CONSTRAINT queue_activity_completed_check CHECK ((completed >= 0)),
    CONSTRAINT queue_activity_failed_check CHECK ((failed >= 0))
);

--
-- Name: queues; Type: TABLE; Schema: kiln; Owner: -
--

CREATE TABLE kiln.queues (
    name text NOT NULL COLLATE pg_catalog."C",
    paused boolean DEFAULT false NOT NULL,
    updated_at bigint NOT NULL
);

--
-- Name: retired_jobs; Type: TABLE; Schema: kiln; Owner: -
--

CREATE TABLE kiln.retired_jobs (
    job_id text NOT NULL COLLATE pg_catalog."C",
    run_id text NOT NULL COLLATE pg_catalog."C",
    retired_at bigint NOT NULL
);

--
-- Name: runs; Type: TABLE; Schema: kiln; Owner: -
--

CREATE TABLE kiln.runs (
    id text NOT NULL COLLATE pg_catalog."C",
    pipeline text NOT NULL,
    pipeline_version integer NOT NULL,
    status text NOT NULL,
    current_stage text,
    input json NOT NULL,
    input_checksum text NOT NULL,
    idempotency_key text,
    subject_id text,
    subject_version bigint,
    tenant text,
    trace_id text,
    error json,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    finished_at bigint,
    trace_parent text,
    CONSTRAINT runs_status_check CHECK ((status = ANY (ARRAY['queued'::text, 'running'::text, 'succeeded'::text, 'failed'::text, 'dead_lettered'::text, 'cancelled'::text, 'superseded'::text, 'parked'::text])))
);

--
-- Name: schema_routines; Type: TABLE; Schema: kiln; Owner: -
--

CREATE TABLE kiln.schema_routines (
    name text NOT NULL COLLATE pg_catalog."C",
    sha256 text NOT NULL,
    applied_at bigint NOT NULL
);

--
-- Name: schema_version; Type: TABLE; Schema: kiln; Owner: -
--

CREATE TABLE kiln.schema_version (
    version integer NOT NULL,
    name text NOT NULL,
    applied_at bigint NOT NULL
);

--
-- Name: stage_records; Type: TABLE; Schema: kiln; Owner: -
--

CREATE TABLE kiln.stage_records (
    run_id text NOT NULL COLLATE pg_catalog."C",
    stage text NOT NULL,
    stage_index integer NOT NULL,
    status text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    output json,
    error json,
    progress json,
    lease_owner text,
    lease_until bigint,
    rollback_status text,
    started_at bigint,
    finished_at bigint,
    duration_ms double precision,
    CONSTRAINT stage_records_rollback_status_check CHECK ((rollback_status = ANY (ARRAY['pending'::text, 'succeeded'::text, 'dead_lettered'::text]))),
    CONSTRAINT stage_records_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'running'::text, 'succeeded'::text, 'failed'::text, 'dead_lettered'::text, 'skipped'::text])))
);

--
-- Name: stage_records_live; Type: VIEW; Schema: kiln; Owner: -
--

CREATE VIEW kiln.stage_records_live AS
 SELECT s.run_id,
    s.stage,
    s.stage_index,
        CASE
            WHEN (j.state = 'leased'::text) THEN 'running'::text
            ELSE s.status
        END AS status,
    (s.attempts + COALESCE(j.attempt, 0)) AS attempts,
    s.output,
    s.error,
    s.progress,
        CASE
            WHEN (j.state = 'leased'::text) THEN j.lease_owner
            ELSE s.lease_owner
        END AS lease_owner,
        CASE
            WHEN (j.state = 'leased'::text) THEN j.lease_until
            ELSE s.lease_until
        END AS lease_until,
    s.rollback_status,
    COALESCE(s.started_at, j.started_at) AS started_at,
    s.finished_at,
    s.duration_ms
   FROM (kiln.stage_records s
     LEFT JOIN kiln.jobs j ON (((j.run_id = s.run_id) AND (j.stage = s.stage) AND (j.kind = 'stage'::text) AND (j.state <> 'dead'::text))));

--
-- Name: version_counters; Type: TABLE; Schema: kiln; Owner: -
--

CREATE TABLE kiln.version_counters (
    scope text NOT NULL COLLATE pg_catalog."C",
    key text NOT NULL COLLATE pg_catalog."C",
    value bigint NOT NULL,
    updated_at bigint NOT NULL,
    CONSTRAINT version_counters_value_check CHECK ((value >= 1))
);

--
-- Name: api_tokens api_tokens_pkey; Type: CONSTRAINT; Schema: kiln; Owner: -
--

ALTER TABLE ONLY kiln.api_tokens
    ADD CONSTRAINT api_tokens_pkey PRIMARY KEY (id);

--
-- Name: api_tokens api_tokens_secret_hash_key; Type: CONSTRAINT; Schema: kiln; Owner: -
--

ALTER TABLE ONLY kiln.api_tokens
    ADD CONSTRAINT api_tokens_secret_hash_key UNIQUE (secret_hash);

--
-- Name: blobs blobs_pkey; Type: CONSTRAINT; Schema: kiln; Owner: -
--

ALTER TABLE ONLY kiln.blobs
    ADD CONSTRAINT blobs_pkey PRIMARY KEY (ref);

--
-- Name: cache_entries cache_entries_pkey; Type: CONSTRAINT; Schema: kiln; Owner: -
--

ALTER TABLE ONLY kiln.cache_entries
    ADD CONSTRAINT cache_entries_pkey PRIMARY KEY (cache, key);

--
-- Name: failed_attempts failed_attempts_pkey; Type: CONSTRAINT; Schema: kiln; Owner: -
--

ALTER TABLE ONLY kiln.failed_attempts
    ADD CONSTRAINT failed_attempts_pkey PRIMARY KEY (run_id, seq);

--
-- Name: jobs jobs_pkey; Type: CONSTRAINT; Schema: kiln; Owner: -
--

ALTER TABLE ONLY kiln.jobs
    ADD CONSTRAINT jobs_pkey PRIMARY KEY (id);

--
-- Name: ledger ledger_pkey; Type: CONSTRAINT; Schema: kiln; Owner: -
--

ALTER TABLE ONLY kiln.ledger
    ADD CONSTRAINT ledger_pkey PRIMARY KEY (run_id, key);

--
-- Name: locks locks_pkey; Type: CONSTRAINT; Schema: kiln; Owner: -
--

ALTER TABLE ONLY kiln.locks
    ADD CONSTRAINT locks_pkey PRIMARY KEY (key);

--
-- Name: publications publications_pkey; Type: CONSTRAINT; Schema: kiln; Owner: -
--

ALTER TABLE ONLY kiln.publications
    ADD CONSTRAINT publications_pkey PRIMARY KEY (subject_id, profile);

--
-- Name: queue_activity queue_activity_pkey; Type: CONSTRAINT; Schema: kiln; Owner: -
--

ALTER TABLE ONLY kiln.queue_activity
    ADD CONSTRAINT queue_activity_pkey PRIMARY KEY (minute_at, queue);

--
-- Name: queues queues_pkey; Type: CONSTRAINT; Schema: kiln; Owner: -
--

ALTER TABLE ONLY kiln.queues
    ADD CONSTRAINT queues_pkey PRIMARY KEY (name);

--
-- Name: request_records request_records_pkey; Type: CONSTRAINT; Schema: kiln; Owner: -
--

ALTER TABLE ONLY kiln.request_records
    ADD CONSTRAINT request_records_pkey PRIMARY KEY (scope, key);

--
-- Name: retired_jobs retired_jobs_pkey; Type: CONSTRAINT; Schema: kiln; Owner: -
--

ALTER TABLE ONLY kiln.retired_jobs
    ADD CONSTRAINT retired_jobs_pkey PRIMARY KEY (job_id);

--
-- Name: runs runs_pkey; Type: CONSTRAINT; Schema: kiln; Owner: -
--

ALTER TABLE ONLY kiln.runs
    ADD CONSTRAINT runs_pkey PRIMARY KEY (id);

--
-- Name: schema_routines schema_routines_pkey; Type: CONSTRAINT; Schema: kiln; Owner: -
--

ALTER TABLE ONLY kiln.schema_routines
    ADD CONSTRAINT schema_routines_pkey PRIMARY KEY (name);

--
-- Name: schema_version schema_version_pkey; Type: CONSTRAINT; Schema: kiln; Owner: -
--

ALTER TABLE ONLY kiln.schema_version
    ADD CONSTRAINT schema_version_pkey PRIMARY KEY (version);

--
-- Name: stage_records stage_records_pkey; Type: CONSTRAINT; Schema: kiln; Owner: -
--

ALTER TABLE ONLY kiln.stage_records
    ADD CONSTRAINT stage_records_pkey PRIMARY KEY (run_id, stage);

--
-- Name: version_counters version_counters_pkey; Type: CONSTRAINT; Schema: kiln; Owner: -
--

ALTER TABLE ONLY kiln.version_counters
    ADD CONSTRAINT version_counters_pkey PRIMARY KEY (scope, key);

--
-- Name: cache_entries_purge; Type: INDEX; Schema: kiln; Owner: -
--

CREATE INDEX cache_entries_purge ON kiln.cache_entries USING btree (purge_at);

--
-- Name: jobs_lease_expiry; Type: INDEX; Schema: kiln; Owner: -
--

CREATE INDEX jobs_lease_expiry ON kiln.jobs USING btree (lease_until) WHERE (state = 'leased'::text);

--
-- Name: jobs_live_key; Type: INDEX; Schema: kiln; Owner: -
--

CREATE UNIQUE INDEX jobs_live_key ON kiln.jobs USING btree (run_id, idempotency_key) WHERE (state <> 'dead'::text);

--
-- Name: jobs_ready_retries; Type: INDEX; Schema: kiln; Owner: -
--

CREATE INDEX jobs_ready_retries ON kiln.jobs USING btree (queue, priority, available_at, id) WHERE ((state = 'ready'::text) AND (attempt >= 1));

--
-- Name: jobs_ready_tenant; Type: INDEX; Schema: kiln; Owner: -
--

CREATE INDEX jobs_ready_tenant ON kiln.jobs USING btree (queue, tenant, priority, available_at, id) WHERE (state = 'ready'::text);

--
-- Name: jobs_ready_untenanted; Type: INDEX; Schema: kiln; Owner: -
--

CREATE INDEX jobs_ready_untenanted ON kiln.jobs USING btree (queue, priority, available_at, id) WHERE ((state = 'ready'::text) AND (tenant IS NULL));

--
-- Name: jobs_retries_running; Type: INDEX; Schema: kiln; Owner: -
--

CREATE INDEX jobs_retries_running ON kiln.jobs USING btree (queue, lease_until) WHERE ((state = 'leased'::text) AND (attempt >= 2));

--
-- Name: jobs_run; Type: INDEX; Schema: kiln; Owner: -
--

CREATE INDEX jobs_run ON kiln.jobs USING btree (run_id);

--
-- Name: locks_expiry; Type: INDEX; Schema: kiln; Owner: -
--

CREATE INDEX locks_expiry ON kiln.locks USING btree (expires_at);

--
-- Name: request_records_created; Type: INDEX; Schema: kiln; Owner: -
--

CREATE INDEX request_records_created ON kiln.request_records USING btree (created_at);

--
-- Name: retired_jobs_run; Type: INDEX; Schema: kiln; Owner: -
--

CREATE INDEX retired_jobs_run ON kiln.retired_jobs USING btree (run_id);

--
-- Name: runs_finished; Type: INDEX; Schema: kiln; Owner: -
--

CREATE INDEX runs_finished ON kiln.runs USING btree (status, finished_at, id) WHERE (finished_at IS NOT NULL);

--
-- Name: runs_idempotency_key; Type: INDEX; Schema: kiln; Owner: -
--

CREATE UNIQUE INDEX runs_idempotency_key ON kiln.runs USING btree (pipeline, idempotency_key) WHERE (idempotency_key IS NOT NULL);

--
-- Name: runs_in_flight; Type: INDEX; Schema: kiln; Owner: -
--

CREATE INDEX runs_in_flight ON kiln.runs USING btree (tenant) WHERE (status = ANY (ARRAY['queued'::text, 'running'::text]));

--
-- Name: runs_status; Type: INDEX; Schema: kiln; Owner: -
--

CREATE INDEX runs_status ON kiln.runs USING btree (status, id) WHERE (status = ANY (ARRAY['failed'::text, 'dead_lettered'::text, 'cancelled'::text, 'superseded'::text, 'parked'::text]));

--
-- Name: runs_subject; Type: INDEX; Schema: kiln; Owner: -
--

CREATE INDEX runs_subject ON kiln.runs USING btree (pipeline, subject_id, subject_version) WHERE (subject_id IS NOT NULL);

--
-- Name: runs_subject_id; Type: INDEX; Schema: kiln; Owner: -
--

CREATE INDEX runs_subject_id ON kiln.runs USING btree (subject_id, id) WHERE (subject_id IS NOT NULL);

--
-- Name: runs_tenant; Type: INDEX; Schema: kiln; Owner: -
--

CREATE INDEX runs_tenant ON kiln.runs USING btree (tenant, id) WHERE (tenant IS NOT NULL);

--
-- Name: failed_attempts failed_attempts_run_id_fkey; Type: FK CONSTRAINT; Schema: kiln; Owner: -
--

ALTER TABLE ONLY kiln.failed_attempts
    ADD CONSTRAINT failed_attempts_run_id_fkey FOREIGN KEY (run_id) REFERENCES kiln.runs(id);

--
-- Name: jobs jobs_run_id_fkey; Type: FK CONSTRAINT; Schema: kiln; Owner: -
--

ALTER TABLE ONLY kiln.jobs
    ADD CONSTRAINT jobs_run_id_fkey FOREIGN KEY (run_id) REFERENCES kiln.runs(id);

--
-- Name: ledger ledger_run_id_fkey; Type: FK CONSTRAINT; Schema: kiln; Owner: -
--

ALTER TABLE ONLY kiln.ledger
    ADD CONSTRAINT ledger_run_id_fkey FOREIGN KEY (run_id) REFERENCES kiln.runs(id);

--
-- Name: retired_jobs retired_jobs_run_id_fkey; Type: FK CONSTRAINT; Schema: kiln; Owner: -
--

ALTER TABLE ONLY kiln.retired_jobs
    ADD CONSTRAINT retired_jobs_run_id_fkey FOREIGN KEY (run_id) REFERENCES kiln.runs(id);

--
-- Name: stage_records stage_records_run_id_fkey; Type: FK CONSTRAINT; Schema: kiln; Owner: -
--

ALTER TABLE ONLY kiln.stage_records
    ADD CONSTRAINT stage_records_run_id_fkey FOREIGN KEY (run_id) REFERENCES kiln.runs(id);

--
-- PostgreSQL database dump complete
--
