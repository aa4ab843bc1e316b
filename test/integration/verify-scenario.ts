/**
 * The scenario the `kiln verify` tests share, whatever the store: real pipelines (qr-code,
 * demo.sleep) run to their end on a real store and real artifact files, then every invariant the
 * audit checks is broken on purpose, each in its own record, and the audit must list exactly
 * those. Breaking the ledger or deleting a run's job is what no port method can do: each store's
 * test gives a {@link StoreTamper} that goes behind the port (state, SQL).
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createFsArtifactStore, type FsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import type { FakeClock } from '../../src/core/clock.ts';
import type { StageStatus } from '../../src/core/model.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { createKiln } from '../../src/engine/create-kiln.ts';
import type { Kiln } from '../../src/engine/kiln-types.ts';
import type { VerifyReport } from '../../src/engine/verify/verify-types.ts';
import { builtinPipelines } from '../../src/pipelines/index.ts';
import { QR_PROFILE } from '../../src/pipelines/qr-code/pipeline.ts';

/** What a store's test does behind the port to break an invariant no port method can break. */
export interface StoreTamper {
  /** Deletes every job of the run (it is left with nothing that can move it on). */
  deleteJobs(runId: string): Promise<void>;
  /** Deletes the ledger entry of a stage (kind `stage`) of the run. */
  deleteLedgerEntry(runId: string, stage: string): Promise<void>;
  /** Sets the status of a stage record of the run (its ledger entry stays). */
  setStageStatus(runId: string, stage: string, status: StageStatus): Promise<void>;
}

/** A kiln over the store under test and a filesystem artifact store. */
export interface VerifyWorld {
  kiln: Kiln;
  store: Store;
  artifacts: FsArtifactStore;
  /** The clock of the kiln and the store. */
  clock: FakeClock;
  /** The artifact store's root. */
  root: string;
}

/** Builds the world: `store` must run on `clock`, which starts at the real time (temp files carry real times). */
export function verifyWorld(store: Store, clock: FakeClock, dir: string): VerifyWorld {
  const root = join(dir, 'artifacts');
  const artifacts = createFsArtifactStore({ root, clock });
  const kiln = createKiln({ store, artifacts, pipelines: builtinPipelines, clock });
  return { kiln, store, artifacts, clock, root };
}

/** A finished QR run: its publication's subject and artifact. */
export interface QrWork {
  runId: string;
  hash: string;
  artifact: string;
}

/** What {@link runHealthyWork} made. */
export interface HealthyWork {
  qrA: QrWork;
  qrB: QrWork;
  sleepRunId: string;
}

/** Lets a worker run every ready job, pass after pass, until the runs have ended. */
async function runToEnd(world: VerifyWorld, runIds: readonly string[]): Promise<void> {
  const worker = world.kiln.createWorker({ workerId: 'verify-test' });
  for (let pass = 0; pass < 20; pass++) {
    await worker.runOnce();
    const runs = await Promise.all(runIds.map((id) => world.kiln.getRun(id)));
    if (runs.every(({ run }) => run.status === 'succeeded')) return;
  }
  const statuses = await Promise.all(runIds.map(async (id) => (await world.kiln.getRun(id)).run.status));
  assert.fail(`runs did not succeed: ${statuses.join(', ')}`);
}

/** Runs two QR codes and a demo.sleep run to success. */
export async function runHealthyWork(world: VerifyWorld): Promise<HealthyWork> {
  const [a, b, sleep] = await Promise.all([
    world.kiln.submit('qr-code', { content: 'verify me A' }),
    world.kiln.submit('qr-code', { content: 'verify me B', format: 'svg' }),
    world.kiln.submit('demo.sleep', { delayMs: 0 }),
  ]);
  assert.ok(a && b && sleep);
  await runToEnd(world, [a.run.id, b.run.id, sleep.run.id]);
  const qr = async (runId: string): Promise<QrWork> => {
    const output = (await world.kiln.getRun(runId)).stages.find((s) => s.stage === 'publish')?.output as { hash: string; artifact: string };
    const publication = await world.kiln.getPublication(output.hash, QR_PROFILE);
    assert.equal(publication?.artifactRef, output.artifact);
    return { runId, hash: output.hash, artifact: output.artifact };
  };
  return { qrA: await qr(a.run.id), qrB: await qr(b.run.id), sleepRunId: sleep.run.id };
}

/** A violation as the tests name it: its kind and the id that pins it down. */
export type ExpectedViolation = `${string} ${string}`;

/** The listed violations of a report as {@link ExpectedViolation}s, sorted. */
export function found(report: VerifyReport): ExpectedViolation[] {
  return report.violations
    .map((v): ExpectedViolation => {
      const id = v.ids.subjectId ?? v.ids.key ?? v.ids.jobId ?? v.ids.tempPath ?? (v.ids.stage ? `${v.ids.runId}/${v.ids.stage}` : v.ids.runId) ?? '?';
      return `${v.kind} ${id}`;
    })
    .sort();
}

/** Flips one byte in the middle of an artifact file, keeping its size. */
export async function flipByte(artifacts: FsArtifactStore, ref: string): Promise<void> {
  const path = artifacts.pathOf(ref);
  const bytes = await readFile(path);
  const at = Math.floor(bytes.length / 2);
  bytes[at] = (bytes[at] ?? 0) ^ 0xff;
  await writeFile(path, bytes);
}

/** Writes a temp file under the artifact store's tmp/ last written at `mtimeMs`; returns its path relative to the store. */
export async function writeTemp(root: string, name: string, mtimeMs: number): Promise<string> {
  await mkdir(join(root, 'tmp'), { recursive: true });
  const path = join(root, 'tmp', name);
  await writeFile(path, 'half-written');
  await utimes(path, mtimeMs / 1000, mtimeMs / 1000);
  return `tmp/${name}`;
}

/** How far past its expiry the stale lease is. */
export const FAR_PAST_MS = 24 * 3600_000;

/**
 * Breaks every invariant the audit checks, each in its own record, and returns the violations
 * the audit must list (and nothing else): a flipped byte in one published artifact (also in the
 * QR cache entry that references it), another one deleted, a job leased a day past its expiry,
 * a run with no job, a ledger entry missing, another one left for a stage that is no longer
 * succeeded, and a temp file older than the grace (next to a fresh one, which is not reported).
 */
export async function breakEverything(world: VerifyWorld, tamper: StoreTamper, work: HealthyWork): Promise<ExpectedViolation[]> {
  const { kiln, store, artifacts, clock } = world;
  await flipByte(artifacts, work.qrA.artifact);
  await rm(artifacts.pathOf(work.qrB.artifact));

  const stale = await kiln.submit('demo.sleep', { delayMs: 0 });
  const [claimed] = await store.jobs.claim([{ queue: 'demo.sleep.prepare', workerId: 'crashed-worker', limit: 1, leaseMs: 30_000 }]);
  assert.equal(claimed?.job.runId, stale.run.id);
  const stuck = await kiln.submit('demo.sleep', { delayMs: 1 });
  await tamper.deleteJobs(stuck.run.id);
  await tamper.deleteLedgerEntry(work.sleepRunId, 'process');
  await tamper.setStageStatus(work.sleepRunId, 'finish', 'running');
  await clock.advance(FAR_PAST_MS);

  const orphan = await writeTemp(world.root, 'crashed.tmp', clock.now() - 2 * 3600_000);
  await writeTemp(world.root, 'writing.tmp', clock.now() - 60_000);
  return [
    `PUBLICATION_ARTIFACT_CORRUPT ${work.qrA.hash}`,
    `CACHE_ARTIFACT_CORRUPT ${work.qrA.hash}`,
    `PUBLICATION_ARTIFACT_MISSING ${work.qrB.hash}`,
    `CACHE_ARTIFACT_MISSING ${work.qrB.hash}`,
    `LEASE_EXPIRED_UNREAPED ${claimed?.job.id ?? ''}`,
    `RUN_WITHOUT_JOB ${stuck.run.id}`,
    `LEDGER_ENTRY_MISSING ${work.sleepRunId}/process`,
    `LEDGER_ENTRY_UNEXPECTED ${work.sleepRunId}/finish`,
    `TEMP_FILE_ORPHANED ${orphan}`,
  ].sort() as ExpectedViolation[];
}

/** Asserts that a report of a healthy store after {@link runHealthyWork} found nothing and read everything. */
export function assertHealthy(report: VerifyReport): void {
  assert.deepEqual(found(report), []);
  assert.equal(report.ok, true);
  assert.equal(report.complete, true);
  const scanned = Object.fromEntries(report.checks.map((c) => [c.check, c.scanned]));
  assert.deepEqual(scanned, { publications: 2, cache: 2, leases: 0, runs: 3, ledger: 3, temps: 0 });
}
