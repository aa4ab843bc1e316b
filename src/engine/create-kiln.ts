/**
 * `createKiln`: the engine facade over a Store. Submission (validate, canonicalise, hash),
 * operator actions, and workers.
 */
import { contentHash } from '../core/canonical.ts';
import { systemClock } from '../core/clock.ts';
import { AdmissionRefusedError, ConfigError, NotFoundError, ValidationError, type AdmissionCode } from '../core/errors.ts';
import { createIdGenerator } from '../core/ids.ts';
import { silentLogger } from '../core/logger.ts';
import type { JsonValue, RunStatus } from '../core/model.ts';
import type { PipelineDefinition } from '../core/pipeline/define-pipeline.ts';
import type { SubmitRunRequest, SubmitRunResult } from '../core/ports/jobs.ts';
import { noopObserver } from '../core/observer.ts';
import type { Kiln, KilnOptions } from './kiln-types.ts';
import type { RunEndedEvent } from './worker-deps.ts';
import { createStagePlan } from './stage-plan.ts';
import { collectArtifacts } from './artifact-gc.ts';
import { DEFAULT_VERIFY_LEASE_GRACE_MS, DEFAULT_VERIFY_TEMP_GRACE_MS, verifyStore } from './verify/verify-store.ts';
import { createSingleFlightCache } from './single-flight-cache.ts';
import { instrumentArtifacts } from './instrumented-artifacts.ts';
import { submissionTrace } from './submission-trace.ts';
import { withSpan } from './tracing.ts';
import { createAdmission, type Admission } from './admission.ts';
import { createWorker } from './worker.ts';

const DEFAULT_LIST_LIMIT = 50;
const MAX_LIST_LIMIT = 1_000;
const WAIT_POLL_MS = 50;

/** Normalises a caller's input to JSON, rejecting what JSON cannot hold. */
function toJsonInput(input: unknown): JsonValue {
  if (input === undefined) return null;
  try {
    return JSON.parse(JSON.stringify(input)) as JsonValue;
  } catch (err) {
    throw new ValidationError('input must be JSON', { cause: err });
  }
}

function clampLimit(limit: number | undefined): number {
  return Math.min(Math.max(1, limit ?? DEFAULT_LIST_LIMIT), MAX_LIST_LIMIT);
}

/** Each pipeline's parsed settings; a pipeline without `parseSettings` must not be given any. */
function parseSettings(pipelines: readonly PipelineDefinition[], raw: Readonly<Record<string, unknown>>): Map<string, JsonValue> {
  const parsed = new Map<string, JsonValue>();
  for (const pipeline of pipelines) {
    const value = raw[pipeline.name];
    if (pipeline.parseSettings) parsed.set(pipeline.name, pipeline.parseSettings(value));
    else if (value !== undefined) throw new ConfigError([{ source: 'options', path: `settings.${pipeline.name}`, message: `pipeline ${pipeline.name} takes no settings` }]);
  }
  return parsed;
}

/** Creates the engine. Throws `ConfigError` if a resolved stage policy is invalid. */
export function createKiln(options: KilnOptions): Kiln {
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? createIdGenerator(clock);
  const logger = options.logger ?? silentLogger;
  const observer = options.observer ?? noopObserver;
  const random = options.random ?? Math.random;
  const { store } = options;
  const artifacts = instrumentArtifacts(options.artifacts, observer);
  const plan = createStagePlan(options.pipelines, options.policies, options.lockTtlMs === undefined ? {} : { lockTtlMs: options.lockTtlMs });
  const planQueues = new Set(plan.queues);
  /** `queue`, when it is a queue of a registered pipeline; else `UNKNOWN_QUEUE`. */
  const knownQueue = (queue: string): string => {
    if (!planQueues.has(queue)) throw new NotFoundError('queue', queue, { code: 'UNKNOWN_QUEUE' });
    return queue;
  };
  const settings = parseSettings(options.pipelines, options.settings ?? {});
  const runEndedListeners = new Set<(event: RunEndedEvent) => void>();
  const runEnded = (event: RunEndedEvent): void => {
    for (const listener of runEndedListeners) {
      try {
        listener(event);
      } catch (err) {
        logger.warn({ err }, 'onRunEnded listener threw');
      }
    }
  };
  /** Sleeps `ms`, or less if a worker of this process ends the run meanwhile. */
  const untilRunEnds = (runId: string, ms: number): Promise<void> =>
    new Promise((resolve) => {
      const wake = (event: RunEndedEvent): void => {
        if (event.runId === runId) done();
      };
      const done = (): void => {
        cancel();
        runEndedListeners.delete(wake);
        resolve();
      };
      const cancel = clock.setTimer(done, ms);
      runEndedListeners.add(wake);
    });
  const admission = createAdmission(options.admission, clock);
  const cache = createSingleFlightCache({ store, clock, ids, observer, random, owner: `kiln-${ids.token().slice(0, 12)}` });

  /** Submits with the admission limits attached (see admission.ts); a refused batch spends no submit token. */
  const submitAdmitted = async (limits: Admission, pipelineName: string, requests: SubmitRunRequest[]): Promise<SubmitRunResult[]> => {
    const admitted = limits.admit(requests);
    let results: SubmitRunResult[];
    try {
      results = await store.jobs.submit(admitted.requests);
    } catch (err) {
      admitted.refund();
      if (err instanceof AdmissionRefusedError) observer.submitRefused(pipelineName, err.code as AdmissionCode, requests.length);
      throw err;
    }
    admitted.settle(results);
    return results;
  };

  /**
   * Validates every input first (a bad one submits nothing), then submits all in one transaction,
   * as the span `kiln.submit`: each run stores it as its trace parent (see submission-trace.ts).
   */
  const submitMany: Kiln['submitMany'] = (pipelineName, items) => {
    const tracing = submissionTrace(items, ids);
    return withSpan(
      'kiln.submit',
      async (span) => {
        const stages = plan.stages(pipelineName);
        const pipeline = plan.pipelines.get(pipelineName);
        const first = stages[0];
        if (!pipeline || !first) throw new NotFoundError('pipeline', pipelineName, { code: 'UNKNOWN_PIPELINE' });
        const stageNames = stages.map((s) => s.definition.name);
        const requests = items.map(({ input: raw, options = {} }, index): SubmitRunRequest => {
          let input: JsonValue;
          try {
            input = pipeline.parseInput ? pipeline.parseInput(raw) : toJsonInput(raw);
          } catch (err) {
            if (err instanceof ValidationError && items.length > 1) {
              throw new ValidationError(`item ${index}: ${err.message}`, { code: err.code, cause: err, details: { index, ...err.details } });
            }
            throw err;
          }
          const { traceparent: _header, traceId: _id, ...rest } = options;
          return { pipeline: pipelineName, pipelineVersion: pipeline.version, input, inputChecksum: contentHash(input), stages: stageNames, firstJob: first.job, ...rest, ...tracing.ofItem(index, span) };
        });
        const results = admission ? await submitAdmitted(admission, pipelineName, requests) : await store.jobs.submit(requests);
        let deduplicated = 0;
        for (const { run, created } of results) {
          if (created) observer.runStatus(pipelineName, run.status, run.tenant);
          else deduplicated++;
        }
        if (deduplicated > 0) observer.submitDeduplicated(pipelineName, deduplicated);
        if (span.isRecording()) {
          span.setAttributes({ 'kiln.runs.created': results.length - deduplicated, 'kiln.runs.deduplicated': deduplicated });
          if (results.length === 1 && results[0]) span.setAttribute('kiln.run_id', results[0].run.id);
        }
        return results;
      },
      { parent: tracing.parent, attributes: () => ({ 'kiln.pipeline': pipelineName, 'kiln.runs.submitted': items.length }) },
    );
  };

  const getRun: Kiln['getRun'] = async (runId) => {
    const detail = await store.reads.getRun(runId);
    if (!detail) throw new NotFoundError('run', runId);
    return detail;
  };

  return {
    store,
    artifacts,
    pipelines: plan.pipelines,
    policyOf: (pipeline, stage) => plan.stage(pipeline, stage).policy,

    async submit(pipelineName, rawInput, options = {}) {
      const [result] = await submitMany(pipelineName, [{ input: rawInput, options }]);
      if (!result) throw new Error('the store returned no result for a submitted run');
      return result;
    },
    submitMany,

    getRun,
    listRuns: (query = {}) => store.reads.listRuns({ ...query, limit: clampLimit(query.limit) }),
    async listAttempts(runId) {
      const attempts = await store.reads.listAttempts(runId);
      if (attempts.length === 0 && !(await store.reads.getRun(runId))) throw new NotFoundError('run', runId);
      return attempts;
    },
    async cancelRun(runId, reason = 'cancelled by operator') {
      const run = await store.operator.cancelRun(runId, reason);
      observer.runStatus(run.pipeline, run.status, run.tenant);
      observer.runFinished(run.pipeline, run.status, Math.max(0, (run.finishedAt ?? run.updatedAt) - run.createdAt));
      return run;
    },
    resumeRun: (runId) => store.operator.resumeRun(runId),
    replayJob: (jobId) => store.operator.replayJob(jobId),
    async getJob(jobId) {
      const job = await store.reads.getJob(jobId);
      if (!job) throw new NotFoundError('job', jobId);
      return job;
    },
    listJobs: (query = {}) => store.reads.listJobs({ ...query, limit: clampLimit(query.limit) }),
    ledger: (runId) => store.reads.readLedger(runId),
    listDeadLetters: (query = {}) => store.reads.listDeadLetters({ ...query, limit: clampLimit(query.limit) }),
    deadLetterGroups: () => store.stats.deadLetterGroups(),
    queueActivity: (query) => store.stats.queueActivity(query),
    listCacheEntries: (query = {}) => store.cache.list({ ...query, limit: clampLimit(query.limit) }),

    async queues() {
      const stats = await store.reads.queueStats();
      const known = new Set(stats.map((s) => s.queue));
      const empty = plan.queues
        .filter((q) => !known.has(q))
        .map((queue) => ({ queue, paused: false, ready: 0, scheduled: 0, leased: 0, parked: 0, dead: 0, oldestReadyAgeMs: 0 }));
      return [...stats, ...empty].sort((a, b) => a.queue.localeCompare(b.queue));
    },
    // Operator actions name a queue of a registered pipeline: any other name would create a queue
    // (and a metric series) per name a client makes up.
    pauseQueue: async (queue) => store.operator.setQueuePaused(knownQueue(queue), true),
    resumeQueue: async (queue) => store.operator.setQueuePaused(knownQueue(queue), false),
    drainQueue: async (queue) => store.operator.drainQueue(knownQueue(queue)),

    createWorker: (workerOptions) => createWorker({ store, plan, artifacts, logger, observer, clock, ids, random, cache, runEnded, settings }, workerOptions),
    settingsOf: (pipeline) => settings.get(pipeline) ?? null,
    untilRunEnds,
    onRunEnded(listener) {
      runEndedListeners.add(listener);
      return () => void runEndedListeners.delete(listener);
    },
    cache,
    collectArtifacts: (gcOptions) => collectArtifacts({ store, artifacts, clock }, gcOptions),
    verify: (verifyOptions = {}) =>
      verifyStore(
        { store, artifacts, clock },
        {
          ...verifyOptions,
          leaseGraceMs: verifyOptions.leaseGraceMs ?? DEFAULT_VERIFY_LEASE_GRACE_MS,
          tempGraceMs: verifyOptions.tempGraceMs ?? DEFAULT_VERIFY_TEMP_GRACE_MS,
        },
      ),
    getPublication: (subjectId, profile) => store.publications.get(subjectId, profile),
    listPublications: (subjectId) => store.publications.list(subjectId),
    deletePublications: (subjectId, profiles) => store.publications.delete(subjectId, profiles),
    allocateVersion: (scope, key) => store.versions.allocate(scope, key),
    lockStats: () => store.locks.stats(),
    listLocks: (query) => store.locks.list(query),
    rememberRequest: (record) => store.requests.remember(record),
    getRequest: (scope, key) => store.requests.get(scope, key),

    async waitForRun(runId, { timeoutMs = 30_000, statuses } = {}) {
      const done = (s: RunStatus): boolean => (statuses ? statuses.includes(s) : s !== 'queued' && s !== 'running');
      const deadline = clock.now() + timeoutMs;
      for (;;) {
        const detail = await getRun(runId);
        if (done(detail.run.status) || clock.now() >= deadline) return detail;
        await untilRunEnds(runId, Math.min(WAIT_POLL_MS, Math.max(1, deadline - clock.now())));
      }
    },
  };
}
