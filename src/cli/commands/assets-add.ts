/**
 * The work of `kiln assets add`: upload each file through the asset service (a new version of
 * its asset id, one `thumbnails` run each), then run a worker in this process on the thumbnails
 * queues until every submitted run has ended, reporting progress as stages complete. Waiting lives
 * here, in the CLI, not in the pipeline: the pipeline only starts runs.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { PipelineError } from '../../core/errors.ts';
import type { RunDetail } from '../../core/ports/reads.ts';
import { createAssetService, type AssetService } from '../../pipelines/thumbnails/asset-service.ts';
import { THUMBNAILS_PIPELINE } from '../../pipelines/thumbnails/pipeline.ts';
import type { Runtime } from '../runtime.ts';
import type { InputFile } from './assets-glob.ts';
import { assetIdOf, type IdFrom } from './assets-ids.ts';
import type { AddProgress } from './assets-progress.ts';
import type { FileOutcome } from './assets-summary.ts';

/** Options of {@link addAssets}. */
export interface AddAssetsOptions {
  idFrom: IdFrom;
  /** Whose assets (see `createAssetService`); null: without a tenant. */
  tenant: string | null;
  /** Profiles to render; absent = every configured profile. */
  profiles?: string[];
  /** Stop waiting at this epoch-ms time (runs not ended by then are reported as such). */
  deadlineAt?: number;
  /** Resolves when the user asks to stop (Ctrl-C): the command stops waiting and reports. */
  interrupted: Promise<unknown>;
}

/** How often unfinished runs are polled: runs ended by this process's worker wake the loop sooner. */
const POLL_MS = 200;
/** Most runs read per poll, round robin, so a thousand files do not mean a thousand reads per tick. */
const POLL_BATCH = 32;

/** Run statuses the command waits for. `parked` counts: it needs an operator, not more waiting. */
function hasEnded(status: string): boolean {
  return status !== 'queued' && status !== 'running';
}

/** A file-system failure (`ENOENT`, `EACCES`, ...) or an oversized stream: that file is rejected, the rest go on. */
function isFileProblem(err: unknown): err is Error & { code: string } {
  if (err instanceof PipelineError) return err.code === 'PAYLOAD_TOO_LARGE';
  return err instanceof Error && typeof (err as { syscall?: unknown }).syscall === 'string';
}

/** Stores one file and starts its run; a file that cannot be read or is too large is `rejected`. */
async function uploadOne(service: AssetService, file: InputFile, options: AddAssetsOptions): Promise<FileOutcome> {
  const outcome: FileOutcome = { file: file.display, assetId: null, version: null, runId: null, status: 'rejected', published: [], error: null };
  try {
    const { size } = await stat(file.path);
    outcome.assetId = await assetIdOf(file.path, options.idFrom);
    if (size > service.maxUploadBytes) {
      // Refused before storing anything, with the code inspect would give.
      outcome.error = { code: 'ASSET_TOO_LARGE', message: `the file has ${size} bytes, more than the ${service.maxUploadBytes} accepted` };
      return outcome;
    }
    const started = await service.upload(outcome.assetId, createReadStream(file.path), undefined, options.profiles);
    return { ...outcome, version: started.version, runId: started.run.id, status: started.run.status };
  } catch (err) {
    if (!isFileProblem(err)) throw err;
    outcome.error = { code: err.code, message: err.message };
    return outcome;
  }
}

/** Fills a finished outcome from its run: status, error, the profiles `publish` reported. */
function settle(outcome: FileOutcome, detail: RunDetail): void {
  const { run, stages } = detail;
  outcome.status = run.status;
  // A parked run keeps its error on the stage that failed, not on the run.
  const error = run.error ?? stages.find((s) => s.error !== null)?.error ?? null;
  outcome.error = error && run.status !== 'succeeded' ? { code: error.code, message: error.message } : null;
  const published = (stages.find((s) => s.stage === 'publish')?.output as { published?: unknown } | null | undefined)?.published;
  outcome.published = Array.isArray(published) ? published.filter((p): p is string => typeof p === 'string') : [];
}

/** A sleep that `wake()` cuts short; a wake while awake makes the next sleep return at once. */
function createWaker(): { sleep(ms: number): Promise<void>; wake(): void } {
  let pending: (() => void) | undefined;
  let woken = false;
  return {
    sleep: (ms) =>
      new Promise((resolve) => {
        if (woken) {
          woken = false;
          return resolve();
        }
        const timer = setTimeout(() => done(), ms);
        const done = (): void => {
          clearTimeout(timer);
          pending = undefined;
          resolve();
        };
        pending = done;
      }),
    wake: () => {
      if (pending) pending();
      else woken = true;
    },
  };
}

/** Runs to read this tick: those a local worker just ended first, then round robin over the rest. */
function nextBatch(waiting: readonly string[], endedHere: Set<string>, tick: number): string[] {
  const first = waiting.filter((id) => endedHere.has(id));
  const start = (tick * POLL_BATCH) % Math.max(1, waiting.length);
  const rotated = [...waiting.slice(start), ...waiting.slice(0, start)].filter((id) => !endedHere.has(id));
  return [...first, ...rotated].slice(0, Math.max(POLL_BATCH, first.length));
}

/** Polls the submitted runs until every one ended, the deadline passed or the user interrupted. */
async function waitForRuns(rt: Runtime, outcomes: readonly FileOutcome[], stagesPerRun: number, progress: AddProgress, options: AddAssetsOptions): Promise<void> {
  const waiting = new Map(outcomes.filter((o) => o.runId !== null).map((o) => [o.runId as string, o]));
  const stagesDone = new Map<string, number>();
  const endedHere = new Set<string>();
  const waker = createWaker();
  let stop = false;
  void options.interrupted.then(() => {
    stop = true;
    waker.wake();
  });
  const unsubscribe = rt.kiln.onRunEnded((event) => {
    if (!waiting.has(event.runId)) return;
    endedHere.add(event.runId);
    waker.wake();
  });
  const rejected = outcomes.length - waiting.size;
  try {
    for (let tick = 0; waiting.size > 0 && !stop; tick++) {
      for (const runId of nextBatch([...waiting.keys()], endedHere, tick)) {
        const detail = await rt.kiln.getRun(runId);
        const outcome = waiting.get(runId);
        if (!outcome) continue;
        outcome.status = detail.run.status;
        if (!hasEnded(detail.run.status)) {
          stagesDone.set(runId, detail.stages.filter((s) => s.status === 'succeeded' || s.status === 'skipped').length);
          continue;
        }
        settle(outcome, detail);
        // A run that ended early skipped its remaining stages: they count as done.
        stagesDone.set(runId, stagesPerRun);
        waiting.delete(runId);
        endedHere.delete(runId);
        progress.fileFinished(outcome);
      }
      progress.stagesDone(rejected * stagesPerRun + [...stagesDone.values()].reduce((a, b) => a + b, 0));
      progress.activity(waiting.size === 0 ? 'done' : `${waiting.size} run${waiting.size === 1 ? '' : 's'} in progress`);
      if (waiting.size === 0) break;
      if (options.deadlineAt !== undefined && Date.now() >= options.deadlineAt) break;
      await waker.sleep(options.deadlineAt === undefined ? POLL_MS : Math.max(1, Math.min(POLL_MS, options.deadlineAt - Date.now())));
    }
  } finally {
    unsubscribe();
  }
}

/**
 * Uploads `files` (in order, so files sharing an asset id get increasing versions), runs an
 * in-process worker on the thumbnails queues until every run ended, and returns one outcome per
 * file in the order given. Rejected files are reported as finished at once.
 */
export async function addAssets(rt: Runtime, files: readonly InputFile[], options: AddAssetsOptions, progress: AddProgress): Promise<FileOutcome[]> {
  const stages = rt.kiln.pipelines.get(THUMBNAILS_PIPELINE)?.stages ?? [];
  const service = createAssetService(rt.kiln, options.tenant);
  progress.start(files.length, files.length * stages.length);
  const outcomes: FileOutcome[] = [];
  for (const file of files) {
    progress.activity(`uploading ${file.display}`);
    const outcome = await uploadOne(service, file, options);
    outcomes.push(outcome);
    if (outcome.status === 'rejected') progress.fileFinished(outcome);
  }
  const worker = rt.createWorker({ queues: stages.map((s) => `${THUMBNAILS_PIPELINE}.${s.name}`) });
  worker.start();
  try {
    await waitForRuns(rt, outcomes, stages.length, progress, options);
  } finally {
    // Nothing of ours is in flight once every run ended; after an interrupt, in-flight jobs get the grace period.
    await worker.stop(rt.config.worker.shutdownGraceMs);
  }
  return outcomes;
}
