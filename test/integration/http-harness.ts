/**
 * A real kiln behind `buildApp`: a store (the caller's factory, in a fresh temp dir), the
 * filesystem artifact store, metrics, the built-in pipelines and a worker that the test starts
 * when it wants jobs to run. Everything is removed by `close()`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { Logger } from '../../src/core/logger.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { createKiln } from '../../src/engine/create-kiln.ts';
import type { Kiln, PolicyOverrides, Worker } from '../../src/engine/kiln-types.ts';
import type { AdmissionLimits } from '../../src/engine/admission.ts';
import { buildApp, type AppDeps } from '../../src/http/build-app.ts';
import { readCacheCounters } from '../../src/observe/cache-counters.ts';
import { createMetrics } from '../../src/observe/metrics.ts';
import type { PipelineDefinition } from '../../src/core/pipeline/define-pipeline.ts';
import { builtinPipelines, builtinRoutes } from '../../src/pipelines/index.ts';
import { fsArtifacts, type ArtifactCase } from '../support/artifact-cases.ts';

/** A store plus what removes its data once closed (a PostgreSQL schema, say). */
export interface StoreUnderTest {
  store: Store;
  /** Called after `store.close()`. */
  destroy(): Promise<void>;
  /** The artifact store beside it. @default the filesystem store in the harness's directory */
  artifacts?: ArtifactCase;
}

/** Builds a store whose files (if any) live in `dir`. */
export type StoreFactory = (dir: string) => Store | StoreUnderTest | Promise<Store | StoreUnderTest>;

function isStoreUnderTest(made: Store | StoreUnderTest): made is StoreUnderTest {
  return 'destroy' in made && 'store' in made;
}

/** One app over one fresh store. */
export interface HttpHarness {
  app: FastifyInstance;
  kiln: Kiln;
  /** Created, not started: `worker.start()` when the test wants jobs to run. */
  worker: Worker;
  dir: string;
  /** Polls `GET /v1/runs/:id` until the run has one of `statuses`; fails after `timeoutMs`. */
  waitForStatus(runId: string, statuses: readonly string[], timeoutMs?: number): Promise<RunJson>;
  close(): Promise<void>;
}

/** The parts of the run JSON that tests read. */
export interface RunJson {
  id: string;
  status: string;
  pipeline: string;
  error: { code: string; message: string } | null;
  stages: { stage: string; status: string; attempts: number; startedAt: string | null; durationMs: number | null }[];
  [key: string]: unknown;
}

/** Options of {@link openHttpHarness}. */
export interface HarnessOptions {
  policies?: PolicyOverrides;
  bodyLimitBytes?: number;
  /** Handed to `buildApp` (request logging); default none. */
  logger?: Logger;
  /** Handed to `createKiln` (engine and worker logging); default none. */
  kilnLogger?: Logger;
  /** Handed to `buildApp`: requests unanswered this long get 503. */
  requestTimeoutMs?: number;
  /** Registered instead of the built-in pipelines (without their routes, or policies unless given). */
  pipelines?: readonly PipelineDefinition[];
  /** Handed to `buildApp`: API tokens (metrics access, the verified-token cache's TTL and clocks). */
  auth?: AppDeps['auth'];
  /** Handed to `createKiln`: admission limits of submissions (`admission:` of kiln.yaml). */
  admission?: AdmissionLimits;
}

/** Quick retries so failing runs reach their end state within the test. */
const FAST_POLICIES: PolicyOverrides = {
  'demo.sleep': Object.fromEntries(
    ['prepare', 'process', 'finish'].map((stage) => [stage, { interventionAttempts: 1, maxAttempts: 2, backoff: { baseMs: 10, capMs: 20 } }]),
  ),
};

/** Opens a harness over a fresh store made by `createStore`. */
export async function openHttpHarness(createStore: StoreFactory, options: HarnessOptions = {}): Promise<HttpHarness> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-http-'));
  const made = await createStore(dir);
  const { store, destroy, artifacts = fsArtifacts } = isStoreUnderTest(made) ? made : { store: made, destroy: async () => {} };
  const opened = await artifacts.open(dir);
  try {
    await store.migrate();
  } catch (err) {
    // A pool left open would keep the test process alive after the failure.
    await store.close();
    await destroy();
    opened.close();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const metrics = createMetrics();
  const kiln = createKiln({
    store,
    artifacts: opened.store,
    pipelines: options.pipelines ?? builtinPipelines,
    policies: options.policies ?? (options.pipelines ? {} : FAST_POLICIES),
    observer: metrics.observer,
    ...(options.kilnLogger === undefined ? {} : { logger: options.kilnLogger }),
    ...(options.admission === undefined ? {} : { admission: options.admission }),
  });
  metrics.setQueueStats(() => kiln.queues());
  const app = buildApp({
    kiln,
    metrics,
    routes: builtinRoutes,
    cacheStats: () => readCacheCounters(metrics.registry),
    ...(options.bodyLimitBytes === undefined ? {} : { bodyLimitBytes: options.bodyLimitBytes }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs }),
    ...(options.auth === undefined ? {} : { auth: options.auth }),
  });
  const worker = kiln.createWorker({ workerId: 'test-worker', pollMs: 10, reapMs: 100 });

  async function waitForStatus(runId: string, statuses: readonly string[], timeoutMs = 10_000): Promise<RunJson> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const res = await app.inject({ method: 'GET', url: `/v1/runs/${runId}` });
      const run = res.json<RunJson>();
      if (statuses.includes(run.status)) return run;
      if (Date.now() > deadline) throw new Error(`run ${runId} is ${run.status}, expected ${statuses.join('|')} within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  return {
    app,
    kiln,
    worker,
    dir,
    waitForStatus,
    async close() {
      await worker.stop(1_000);
      await app.close();
      await store.close();
      await destroy();
      opened.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Runs `fn` against a fresh harness over `createStore` and always closes it. */
export async function withHarness(createStore: StoreFactory, fn: (h: HttpHarness) => Promise<void>): Promise<void> {
  const h = await openHttpHarness(createStore);
  try {
    await fn(h);
  } finally {
    await h.close();
  }
}

/** POSTs a JSON body (and optional headers). */
export function postJson(app: FastifyInstance, url: string, body: unknown, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'POST', url, payload: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } });
}
