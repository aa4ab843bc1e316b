/**
 * The composition root of a kiln process: configuration, the store the configuration selects
 * (SQLite or PostgreSQL, migrated), the artifact store, logging, metrics, tracing (the
 * OpenTelemetry SDK, only when an OTLP endpoint is configured) and the engine, opened together
 * and closed together.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { createInlineArtifactStore } from '../artifacts/inline-artifact-store.ts';
import { createFsArtifactStore } from '../artifacts/fs-artifact-store.ts';
import { createS3ArtifactStore } from '../artifacts/s3-artifact-store.ts';
import { createCommandPipeline } from '../commands/command-pipeline.ts';
import type { Logger } from '../core/logger.ts';
import type { Job } from '../core/model.ts';
import type { PipelineDefinition } from '../core/pipeline/define-pipeline.ts';
import type { ArtifactStore } from '../core/ports/artifact-store.ts';
import type { Store, MigrationResult } from '../core/ports/store.ts';
import { loadConfig } from '../config/load.ts';
import { StoreKind, type ResolvedConfig } from '../config/schema.ts';
import { createKiln } from '../engine/create-kiln.ts';
import { ARTIFACT_LATENCY_ENV, latencyFromEnv, STORE_LATENCY_ENV, withArtifactLatency, withStoreLatency } from '../engine/injected-latency.ts';
import type { Kiln, Worker } from '../engine/kiln-types.ts';
import { createLogger } from '../observe/logger.ts';
import { createMetrics, type KilnMetrics } from '../observe/metrics.ts';
import { startTracing, type Tracing } from '../observe/tracing.ts';
import { kilnVersion } from './kiln-version.ts';
import { openStore } from './open-store.ts';

/** Flags that override configuration fields. */
export interface RuntimeFlags {
  db?: string;
  /** `postgres://...`, `redis://...` or `sqlite:<path>`. */
  store?: string;
  host?: string;
  port?: number;
  logLevel?: string;
  logFormat?: string;
}

/** Inputs of {@link openRuntime}. */
export interface RuntimeOptions {
  /** `--config`; else `KILN_CONFIG`, else `./kiln.yaml` if present. */
  configFile?: string;
  flags: RuntimeFlags;
  /** Every pipeline this process registers. */
  pipelines: readonly PipelineDefinition[];
  /** @default process.env */
  env?: Readonly<Record<string, string | undefined>>;
  /** @default process.cwd() */
  cwd?: string;
  /** Where log lines go. @default stdout */
  logDestination?: NodeJS.WritableStream;
  /** The command running (`serve`, `worker`, ...): the `kiln.command` of its spans. */
  command?: string;
}

/** Everything a command works with. */
export interface Runtime {
  readonly config: ResolvedConfig;
  readonly store: Store;
  readonly artifacts: ArtifactStore;
  readonly logger: Logger;
  readonly metrics: KilnMetrics;
  /** The OpenTelemetry SDK, when spans are exported (`tracing.enabled`). */
  readonly tracing: Tracing;
  readonly kiln: Kiln;
  /** What `migrate()` did at open. */
  readonly migration: MigrationResult;
  /**
   * A worker with the configured poll, reaper and temp-grace settings (not started); its slots
   * feed the utilization gauges of `/metrics`.
   */
  createWorker(options: { workerId?: string; queues?: readonly string[] }): Worker;
  /** Closes the store, then exports the spans left and stops tracing. Idempotent. */
  close(): Promise<void>;
}

/**
 * Fault injection for crash tests: with `KILN_CRASH_BEFORE_COMMIT=<pipeline>.<stage>`, a worker
 * SIGKILLs its own process after that stage's handler succeeded and before the commit, the worst
 * moment to die (its artifacts are written, nothing is recorded).
 */
export const CRASH_BEFORE_COMMIT_ENV = 'KILN_CRASH_BEFORE_COMMIT';

function crashHook(target: string | undefined): { beforeCommit?: (job: Job) => void } {
  if (!target) return {};
  return {
    beforeCommit(job) {
      if (`${job.pipeline}.${job.stage}` === target) process.kill(process.pid, 'SIGKILL');
    },
  };
}

/** The configuration and the logger of a process; throws `ConfigError` listing every problem. */
export function loadRuntimeConfig(options: RuntimeOptions): { config: ResolvedConfig; logger: Logger } {
  const config = loadConfig({
    ...(options.configFile === undefined ? {} : { file: options.configFile }),
    env: { ...(options.env ?? process.env) },
    flags: options.flags,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    pipelines: options.pipelines,
  });
  const logger = createLogger({
    level: config.log.level,
    format: config.log.format,
    ...(options.logDestination === undefined ? {} : { destination: options.logDestination }),
  });
  return { config, logger };
}

/**
 * Loads the configuration (throws `ConfigError` listing every problem), opens and migrates the
 * selected store and builds the engine. No worker is started.
 */
export async function openRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { config, logger } = loadRuntimeConfig(options);
  const env = options.env ?? process.env;
  // Test hooks: latency injected into every store / artifact store call of this process.
  const storeLatency = latencyFromEnv(env, STORE_LATENCY_ENV);
  const artifactLatency = latencyFromEnv(env, ARTIFACT_LATENCY_ENV);
  // Commands that open a runtime may create the store; its folder comes first.
  if (config.store.kind === StoreKind.sqlite && config.store.path !== ':memory:') mkdirSync(dirname(config.store.path), { recursive: true });
  const opened = await openStore(config.store, { logger });
  let migration: MigrationResult;
  try {
    migration = await opened.migrate();
  } catch (err) {
    await opened.close();
    throw err;
  }
  const store = storeLatency ? withStoreLatency(opened, storeLatency) : opened;
  // artifacts.url (s3://...) selects the S3 store; the filesystem store under artifacts.root is the default.
  const s3 = config.artifacts.s3 ? createS3ArtifactStore({ ...config.artifacts.s3, env }) : null;
  const files = s3 ?? createFsArtifactStore({ root: config.artifacts.root, ...(config.artifacts.maxBytes === undefined ? {} : { maxBytes: config.artifacts.maxBytes }) });
  // Small buffers (QR images) ride on the store's commits instead of a file or PUT of their own.
  const chosen = createInlineArtifactStore({ blobs: store.blobs, underlying: files, maxInlineBytes: config.artifacts.inlineMaxBytes });
  const artifacts = artifactLatency ? withArtifactLatency(chosen, artifactLatency) : chosen;
  const metrics = createMetrics();
  const tracing = await startTracing({ env, logger, version: kilnVersion(), ...(options.command ? { command: options.command } : {}) });
  const kiln = createKiln({
    store,
    artifacts,
    // Pipelines declared in kiln.yaml run beside the registered ones, as ordinary definitions.
    pipelines: [...options.pipelines, ...config.commandPipelines.map(createCommandPipeline)],
    policies: config.policies,
    admission: config.admission,
    lockTtlMs: config.worker.lock.ttlMs,
    settings: config.settings,
    logger,
    observer: metrics.observer,
  });
  // Queue depth and lock gauges are read from the store at scrape time, not tracked incrementally.
  metrics.setQueueStats(() => kiln.queues(), store.capabilities.name);
  metrics.setLockStats(() => kiln.lockStats());
  metrics.declarePipelines([...kiln.pipelines.values()]);
  let closed: Promise<void> | undefined;
  return {
    config,
    store,
    artifacts,
    logger,
    metrics,
    tracing,
    kiln,
    migration,
    createWorker(worker) {
      const created = kiln.createWorker({
        ...worker,
        pollMs: config.worker.pollMs,
        reapMs: config.worker.reapMs,
        tempGraceMs: config.worker.tempGraceMs,
        artifactGraceMs: config.worker.artifactGraceMs,
        retention: config.retention,
        ...crashHook((options.env ?? process.env)[CRASH_BEFORE_COMMIT_ENV]),
      });
      metrics.setWorkerSlots(() => created.slots());
      return created;
    },
    close: () => (closed ??= store.close().finally(() => Promise.all([s3?.close(), tracing.shutdown()]).then(() => undefined))),
  };
}
