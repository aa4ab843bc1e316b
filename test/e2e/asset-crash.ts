/**
 * One crash test body for the thumbnails pipeline, run per crash point and per store: a `kiln
 * serve` started with `KILN_CRASH_BEFORE_COMMIT=thumbnails.<stage>` takes an upload (and holds a
 * second, half-sent upload open) and SIGKILLs itself after that stage's handler succeeded, before
 * its commit: render outputs written and their cache entries ready, or the publications handed to
 * the commit, but nothing of that stage recorded; the half-sent upload leaves its temp file behind.
 * A second `kiln serve` takes over once the short lease expires. Then:
 *
 * - the run succeeds; the crashed stage ran twice and is recorded once, every other stage once;
 * - each profile has exactly one publication (rows counted with SQL), served with the right format
 *   and size, naming one of the objects the dead worker wrote (the retry rebuilt nothing: every
 *   object file is the one that existed right after the crash, same inode and mtime, and the
 *   survivor counts no render build);
 * - the orphaned temp file is removed by the survivor's reaper (short `worker.tempGraceMs`);
 * - `kiln gc --dry-run --grace 0` finds no leak. "Leak" here means an object that nothing
 *   references and that nobody will ever need: the run's normalized intermediate (held by the
 *   transform cache entry), its three renders (cache entries and publications) must all be
 *   referenced, and the only collectable object is the uploaded source, which a finished run no
 *   longer needs (legitimate garbage; the periodic GC removes it after its grace period).
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { CRASH_BEFORE_COMMIT_ENV } from '../../src/cli/runtime.ts';
import { RENDER_CACHE } from '../../src/pipelines/thumbnails/stages.ts';
import { photoJpeg } from '../support/asset-fixtures.ts';
import type { CorpusImage } from './asset-corpus.ts';
import { PROFILES, profileProblems } from './asset-expect.ts';
import { getProfile, getRunJson, putAsset, startStreamedPut, UploadMode, type AssetRunJson } from './asset-http.ts';
import { gcDryRun, listObjectFiles, listTempFiles, sha256Ref, type ObjectFile } from './asset-store-files.ts';
import { cleanEnv, exitWithin, waitUntil, type KilnProcess } from './kiln-process.ts';
import { scrapeMetricSum, startServe } from './qr-serve.ts';
import { openE2eScene, qrE2eStoreCases, type QrE2eStore, type QrE2eStoreCase } from './qr-stores.ts';

/** The stages a crash test can kill the worker in. */
export type CrashStage = 'render' | 'publish';

const LEASE_MS = 1_500;
/** Bounds each wait on a process; a whole case normally takes ~6 s. */
const STEP_TIMEOUT_MS = 20_000;
const STAGES = ['ingest', 'inspect', 'transform', 'render', 'publish', 'cleanup'];

/**
 * Short leases on the stages that may crash; `tempGraceMs` differs per process: the doomed server
 * must not sweep the temp of its own half-sent upload, the survivor sweeps it quickly (the reaper
 * runs the temp sweep every 60 passes: 60 x 50 ms = 3 s). Inline artifacts are off: the checks
 * are of object files (inode, mtime) and temp files, so every render must be a file.
 */
const KILN_YAML = (artifactsRoot: string, tempGraceMs: number): string => `
artifacts:
  root: ${artifactsRoot}
  inlineMaxBytes: 0
worker:
  pollMs: 50
  reapMs: 50
  tempGraceMs: ${tempGraceMs}
pipelines:
  thumbnails:
    stages:
      render: { leaseMs: ${LEASE_MS}, heartbeatMs: 300 }
      publish: { leaseMs: ${LEASE_MS}, heartbeatMs: 300 }
`;


/** Refs of `objects` (for messages and set comparisons). */
const refsOf = (objects: readonly { ref: string }[]): string[] => objects.map((o) => o.ref);

/** Registers the crash test of `stage` on SQLite and on PostgreSQL (skipped with the reason when there is none). */
export function describeAssetCrash(stage: CrashStage): void {
  const { sqlite, postgres } = qrE2eStoreCases();
  for (const storeCase of [sqlite, postgres] as QrE2eStoreCase[]) {
    describe(`${storeCase.name}: a kiln serve SIGKILLed after thumbnails.${stage} succeeded, before its commit`, { skip: storeCase.skip }, () => {
      test(`a second server finishes the run: one publication per profile, nothing rebuilt, the orphaned temp reaped, and gc finds only the finished upload`, { timeout: 60_000 }, (t) =>
        crashCase(t, storeCase, stage),
      );
    });
  }
}

/** What a case shares between its phases. */
interface CrashScene {
  stage: CrashStage;
  dir: string;
  artifactsRoot: string;
  e2eStore: QrE2eStore;
  env: NodeJS.ProcessEnv;
  procs: KilnProcess[];
  doomedYaml: string;
  survivorYaml: string;
  photo: Buffer;
  assetId: string;
}

/** What the dead worker left. */
interface CrashState {
  runId: string;
  /** Names of the temp files of the half-sent upload. */
  orphans: string[];
  /** The objects the crashed stage (or earlier ones) wrote: one render per profile. */
  renders: string[];
  objects: ObjectFile[];
}

async function crashCase(t: TestContext, storeCase: QrE2eStoreCase, stage: CrashStage): Promise<void> {
  const startedAt = Date.now();
  const { dir, store: e2eStore, procs } = await openE2eScene(t, storeCase, `kiln-asset-crash-${stage}-`);
  const artifactsRoot = join(dir, 'artifacts');
  const scene: CrashScene = {
    stage,
    dir,
    artifactsRoot,
    e2eStore,
    env: cleanEnv({ ...e2eStore.env, KILN_LOG_LEVEL: 'warn' }),
    procs,
    doomedYaml: join(dir, 'doomed.yaml'),
    survivorYaml: join(dir, 'survivor.yaml'),
    photo: await photoJpeg(1024, 768),
    assetId: `crash-${stage}`,
  };
  await writeFile(scene.doomedYaml, KILN_YAML(artifactsRoot, 3_600_000));
  await writeFile(scene.survivorYaml, KILN_YAML(artifactsRoot, 500));
  const crash = await crashMidRun(scene);
  await recoverAndCheck(scene, crash);
  t.diagnostic(`wall time ${Date.now() - startedAt} ms`);
}

/**
 * Starts the doomed server, half-sends one upload (its temp file is the orphan to reap), uploads
 * the photo and waits for the SIGKILL; then checks the worst moment was hit: the stage's work is
 * done, nothing of it is committed.
 */
async function crashMidRun(scene: CrashScene): Promise<CrashState> {
  const { e2eStore, artifactsRoot, stage, photo, assetId } = scene;
  const doomed = await startServe(['--config', scene.doomedYaml, ...e2eStore.args], scene.dir, { ...scene.env, [CRASH_BEFORE_COMMIT_ENV]: `thumbnails.${stage}` });
  scene.procs.push(doomed.proc);
  const partial = startStreamedPut(doomed.base, 'crash-partial', { 'content-type': 'image/jpeg' });
  partial.write(photo.subarray(0, 64 * 1024));
  const orphans = await waitUntil('the half-sent upload to have a temp file', async () => ((await listTempFiles(artifactsRoot)).length > 0 ? listTempFiles(artifactsRoot) : undefined), STEP_TIMEOUT_MS);

  const accepted = await putAsset(doomed.base, assetId, photo, { mode: UploadMode.raw, contentType: 'image/jpeg' });
  assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
  const runId = accepted.body.run_id ?? '';
  assert.equal((await exitWithin(doomed.proc, 'the crashing server to kill itself', STEP_TIMEOUT_MS)).signal, 'SIGKILL', doomed.proc.output());
  await partial.answer.then(
    (a) => assert.fail(`the half-sent upload was answered ${a.status}`),
    () => undefined,
  );

  const { store } = e2eStore;
  const done = STAGES.slice(0, STAGES.indexOf(stage));
  assert.deepEqual((await store.reads.readLedger(runId)).map((e) => e.stage), done, 'stages before the crash are committed, the crashed one is not');
  assert.equal(await e2eStore.countPublications(assetId), 0, 'nothing published yet');
  const transform = (await store.reads.getRun(runId))?.stages.find((s) => s.stage === 'transform')?.output as { artifact: string } | undefined;
  assert.ok(transform, 'transform committed its intermediate');
  const objects = await listObjectFiles(artifactsRoot);
  const renders = refsOf(objects).filter((ref) => ref !== sha256Ref(photo) && ref !== transform.artifact);
  assert.equal(renders.length, PROFILES.length, `the dead worker wrote one object per profile: ${refsOf(objects).join(', ')}`);
  assert.deepEqual(await listTempFiles(artifactsRoot), orphans, 'the half-sent upload left its temp file');
  return { runId, orphans, renders, objects };
}

/** Starts the survivor and checks the run, the publications, the objects, the temps and gc. */
async function recoverAndCheck(scene: CrashScene, crash: CrashState): Promise<void> {
  const { e2eStore, artifactsRoot, assetId } = scene;
  const survivor = await startServe(['--config', scene.survivorYaml, ...e2eStore.args], scene.dir, scene.env);
  scene.procs.push(survivor.proc);
  const finished = await waitUntil(
    'the run to end on the second server',
    async () => {
      const run = await getRunJson(survivor.base, crash.runId);
      return ['succeeded', 'failed', 'dead_lettered', 'parked'].includes(run.status) ? run : undefined;
    },
    STEP_TIMEOUT_MS,
  ).catch((err: unknown) => assert.fail(`${String(err)}\n--- survivor ---\n${survivor.proc.output()}`));
  await checkFinishedRun(finished, scene, survivor.base);
  assert.deepEqual((await e2eStore.store.reads.readLedger(crash.runId)).map((e) => e.stage), STAGES, 'every stage recorded once');
  assert.equal(await e2eStore.countPublications(assetId), PROFILES.length, 'exactly one publication per profile');
  for (const profile of PROFILES) {
    const publication = await e2eStore.store.publications.get(assetId, profile.name);
    assert.ok(publication && crash.renders.includes(publication.artifactRef), `${profile.name} publishes an object the dead worker wrote`);
  }
  assert.deepEqual(await listObjectFiles(artifactsRoot), crash.objects, 'no object was written or rewritten after the crash');
  assert.equal(await scrapeMetricSum([survivor.base], 'kiln_cache_builds_total', { cache: RENDER_CACHE }), 0, 'the survivor rendered nothing');

  await waitUntil('the reaper to remove the orphaned temp file', async () => ((await listTempFiles(artifactsRoot)).length === 0 ? true : undefined), STEP_TIMEOUT_MS);
  assert.ok((await scrapeMetricSum([survivor.base], 'kiln_orphaned_temps_collected_total', {})) >= crash.orphans.length, 'counted as collected');

  const report = await gcDryRun(scene.dir, e2eStore.args, scene.env, scene.survivorYaml);
  assert.deepEqual(refsOf(report.collected), [sha256Ref(scene.photo)], 'the only unreferenced object is the finished upload');
  assert.equal(report.scanned, 2 + PROFILES.length, 'source, intermediate and one render per profile');

  survivor.proc.child.kill('SIGTERM');
  assert.deepEqual(await exitWithin(survivor.proc, 'the second server to stop', STEP_TIMEOUT_MS), { code: 0, signal: null }, survivor.proc.output());
}

/** The run succeeded with the crashed stage attempted twice (recorded once) and every profile served right. */
async function checkFinishedRun(run: AssetRunJson, { stage, assetId, photo }: CrashScene, base: string): Promise<void> {
  assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
  assert.deepEqual(
    run.stages.map((s) => [s.stage, s.status, s.attempts]),
    STAGES.map((s) => [s, 'succeeded', s === stage ? 2 : 1]),
    `${stage} ran twice (the crash, then the retry); every stage succeeded once`,
  );
  const image: CorpusImage = { assetId, kind: 'crash photo', bytes: photo, upload: { mode: UploadMode.raw, contentType: 'image/jpeg' }, upright: { width: 1024, height: 768 }, pixels: () => [] };
  const problems: string[] = [];
  for (const profile of PROFILES) {
    const read = await getProfile(base, assetId, profile.name);
    problems.push(...(await profileProblems(image, profile, read)));
    if (read.version !== 1) problems.push(`${profile.name}: version ${read.version}`);
  }
  assert.deepEqual(problems, []);
}
