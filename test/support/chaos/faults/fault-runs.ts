/**
 * What the in-process fault scenarios share: the `fault.write` pipeline (a stage that writes an
 * artifact unique to its attempt and publishes it, then one that reads it back), a kiln over the
 * scenario's store with a recording observer and a running worker, and the count of what went
 * wrong afterwards, read from the store: runs lost, stage effects duplicated, publications that
 * do not point at the committed attempt's artifact, and runs or jobs stuck.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { definePipeline, type JsonValue, type StageContext } from '../../../../src/index.ts';
import type { ArtifactStore } from '../../../../src/core/ports/artifact-store.ts';
import type { Store } from '../../../../src/core/ports/store.ts';
import { isTerminal } from '../../../../src/core/run/transitions.ts';
import { createKiln } from '../../../../src/engine/create-kiln.ts';
import type { Kiln, PolicyOverrides, Worker } from '../../../../src/engine/kiln-types.ts';
import { createRecorder, type Recorded } from '../../engine-harness.ts';
import { createPrng } from '../../simulation/prng.ts';
import { openFaultStore, type FaultStore, type FaultStoreKind } from './fault-stores.ts';
import type { FaultReport } from './index.ts';

export const FAULT_PIPELINE = 'fault.write';
/** The profile every `fault.write` run publishes its subject under. */
export const FAULT_PROFILE = 'out';
/** Bytes of each artifact `fault.write` writes. */
export const FAULT_ARTIFACT_BYTES = 2_048;

/** The input of a `fault.write` run. */
export interface FaultInput {
  subject: string;
}

async function writeStage(ctx: StageContext): Promise<JsonValue> {
  const { subject } = ctx.input as unknown as FaultInput;
  // Unique to the attempt: a publication from an attempt that did not commit would show.
  const bytes = Buffer.alloc(FAULT_ARTIFACT_BYTES, 32);
  bytes.write(`${subject} attempt ${ctx.attempt} job ${ctx.job.id}`);
  const ref = await ctx.artifacts.put(bytes, { mediaType: 'application/octet-stream' });
  ctx.publish({ subjectId: subject, profile: FAULT_PROFILE, artifactRef: ref.ref, subjectVersion: 1 });
  return { artifact: ref.ref };
}

async function sealStage(ctx: StageContext): Promise<JsonValue> {
  const written = (ctx.outputs['write'] as { artifact: string }).artifact;
  const bytes = await ctx.artifacts.get(written);
  return { artifact: written, size: bytes.byteLength };
}

/** Two stages: `write` (artifact + publication), then `seal` (reads the artifact back). */
export const faultPipeline = definePipeline({
  name: FAULT_PIPELINE,
  version: 1,
  stages: [
    { name: 'write', handler: writeStage },
    { name: 'seal', handler: sealStage },
  ],
});

/** Stages of `fault.write`, in order. */
export const FAULT_STAGES = ['write', 'seal'] as const;

/** Policies for every `fault.write` stage: many quick retries, so faults delay runs but never end them. */
export function faultPolicies(overrides: Record<string, unknown> = {}): PolicyOverrides {
  const policy = { maxAttempts: 200, backoff: { baseMs: 20, capMs: 250 }, leaseMs: 2_000, heartbeatMs: 500, concurrency: 8, ...overrides };
  return { [FAULT_PIPELINE]: Object.fromEntries(FAULT_STAGES.map((stage) => [stage, policy])) };
}

/** What went wrong, read from the store after the runs. */
export interface Outcome {
  lost: number;
  duplicated: number;
  duplicatePublications: number;
  stuck: number;
  /** Runs by final status. */
  statuses: Record<string, number>;
  /** Stage attempts over all runs. */
  attempts: number;
}

/**
 * Counts, for the runs `runIds` of a pipeline with `stages` (publishing under `subjects[i]` when
 * given): lost (absent, or ended other than succeeded, or without its publication), duplicated
 * (a stage recorded more than once, or `extraRuns` beyond those submitted), duplicate publications
 * (pointing at another attempt's artifact than the committed one), stuck (not ended, or jobs left).
 */
export async function countOutcome(
  store: Store,
  runIds: readonly string[],
  options: { stages: readonly string[]; subjects?: readonly string[]; extraRuns?: number },
): Promise<Outcome> {
  const outcome: Outcome = { lost: 0, duplicated: options.extraRuns ?? 0, duplicatePublications: 0, stuck: 0, statuses: {}, attempts: 0 };
  for (const [i, runId] of runIds.entries()) {
    const detail = await store.reads.getRun(runId);
    if (!detail) {
      outcome.lost += 1;
      continue;
    }
    outcome.statuses[detail.run.status] = (outcome.statuses[detail.run.status] ?? 0) + 1;
    outcome.attempts += detail.stages.reduce((n, s) => n + s.attempts, 0);
    if (!isTerminal(detail.run.status)) outcome.stuck += 1;
    else if (detail.run.status !== 'succeeded') outcome.lost += 1;
    const ledger = await store.reads.readLedger(runId);
    for (const stage of options.stages) outcome.duplicated += Math.max(0, ledger.filter((e) => e.stage === stage && e.kind === 'stage').length - 1);
    const subject = options.subjects?.[i];
    if (subject === undefined || detail.run.status !== 'succeeded') continue;
    const committed = (ledger.find((e) => e.stage === 'write')?.output as { artifact?: string } | undefined)?.artifact;
    const publication = await store.publications.get(subject, FAULT_PROFILE);
    if (!publication) outcome.lost += 1;
    else if (publication.artifactRef !== committed) outcome.duplicatePublications += 1;
  }
  outcome.stuck += (await store.reads.listJobs({ limit: 1_000 })).length;
  return outcome;
}

/** A scenario's report from its outcome. */
export function reportOf(name: string, runs: number, outcome: Outcome, details: Record<string, number | string>): FaultReport {
  const { lost, duplicated, duplicatePublications, stuck } = outcome;
  return { name, runs, lost, duplicated, duplicatePublications, stuck, details: { ...details, attempts: outcome.attempts, statuses: JSON.stringify(outcome.statuses) } };
}

/** Polls until every run of `runIds` has ended, or `timeoutMs` passed (stuck runs are counted afterwards). */
export async function waitForRuns(store: Store, runIds: readonly string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const open = new Set(runIds);
  while (open.size > 0 && Date.now() < deadline) {
    for (const runId of [...open]) {
      const detail = await store.reads.getRun(runId);
      if (detail && isTerminal(detail.run.status)) open.delete(runId);
    }
    if (open.size > 0) await sleep(100);
  }
}

/** Polls `condition` every 50 ms until it holds or `timeoutMs` passed; returns whether it held. */
export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(50);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** An in-process kiln over a scenario's store, with its worker running. */
export interface FaultScene {
  dir: string;
  faultStore: FaultStore;
  /** The scene's own connection, for checks (never slowed). */
  store: Store;
  kiln: Kiln;
  worker: Worker;
  recorded: Recorded;
  /** `fault.write` runs submitted so far, and their subjects. */
  runIds: string[];
  subjects: string[];
  /** Submits `count` `fault.write` runs, subjects named after the scenario and the seed. */
  submit(count: number): Promise<void>;
  /** Stops the worker, closes the connections, drops the store and the directory. */
  close(): Promise<void>;
}

/** Options of {@link openFaultScene}. */
export interface FaultSceneOptions {
  name: string;
  seed: number;
  kind: FaultStoreKind;
  /** The artifact store, made in the scene's directory. */
  artifacts(dir: string): ArtifactStore;
  /** Wraps the kiln's store connection (the checks read another one). */
  wrapStore?: (store: Store) => Store;
  policies?: PolicyOverrides;
}

/** Opens a scene: directory, store, kiln with the `fault.write` pipeline, a started worker. */
export async function openFaultScene(options: FaultSceneOptions): Promise<FaultScene> {
  const dir = await mkdtemp(join(tmpdir(), `kiln-fault-${options.name}-`));
  const faultStore = await openFaultStore(options.kind, dir);
  const store = faultStore.connect();
  const kilnStore = faultStore.connect();
  const { observer, recorded } = createRecorder();
  const prng = createPrng(options.seed);
  const kiln = createKiln({
    store: options.wrapStore ? options.wrapStore(kilnStore) : kilnStore,
    artifacts: options.artifacts(dir),
    pipelines: [faultPipeline],
    policies: options.policies ?? faultPolicies(),
    observer,
    random: prng.next,
  });
  const worker = kiln.createWorker({ workerId: `fault-${options.name}`, pollMs: 20, reapMs: 200 });
  worker.start();
  const runIds: string[] = [];
  const subjects: string[] = [];
  return {
    dir,
    faultStore,
    store,
    kiln,
    worker,
    recorded,
    runIds,
    subjects,
    async submit(count) {
      const first = subjects.length;
      const batch = Array.from({ length: count }, (_, i) => `${options.name}-${options.seed}-${first + i}`);
      const results = await kiln.submitMany(FAULT_PIPELINE, batch.map((subject) => ({ input: { subject }, options: { idempotencyKey: subject } })));
      subjects.push(...batch);
      runIds.push(...results.map((r) => r.run.id));
    },
    async close() {
      await worker.stop(2_000);
      await kilnStore.close();
      await store.close();
      await faultStore.destroy();
      // A handler abandoned at its timeout may still be writing its artifact: retry while directories refill.
      await rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    },
  };
}
