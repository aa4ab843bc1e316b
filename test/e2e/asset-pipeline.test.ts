/**
 * The thumbnails pipeline end to end on SQLite with a real `kiln serve` (API and embedded worker),
 * once with filesystem artifacts and once with S3 artifacts (test/support/artifact-cases.ts):
 * 50 real images (EXIF-rotated photos, PNG with alpha, animated GIF and WebP, SVG, CMYK JPEG,
 * WebP/AVIF/TIFF, ...) are uploaded as raw bodies and multipart forms, interleaved at random with
 * bad uploads (truncated JPEG, zero bytes, text named .png, a 50000x50000 PNG header, a wrong
 * Content-Type, three ways of going over the size limit) and an SVG that tries to run a script,
 * fetch a URL and read a local file. Everything is fired in one burst; the tests then check what
 * came out: every profile of every image (read back with sharp), the stable failure of every bad
 * upload, nothing stored for the refused ones, no connection and no local pixels from the SVG,
 * one transform per distinct source, and no artifact leaked. The upload order is shuffled from a
 * seed printed at the start; `KILN_TEST_SEED=<n>` replays it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { TRANSFORM_CACHE } from '../../src/pipelines/thumbnails/stages.ts';
import { decodePixels, hostileSvg, isNear, SECRET_COLOR, writeSecretPng } from '../support/asset-fixtures.ts';
import { buildBadUploads, type BadUpload } from './asset-bad-inputs.ts';
import { buildCorpus, type CorpusImage } from './asset-corpus.ts';
import { PROFILES, profileProblems } from './asset-expect.ts';
import { getProfile, putAsset, sourceOf, stageOutput, UploadMode, waitForRunsSettled, type AssetRunJson, type ProfileRead, type UploadAnswer } from './asset-http.ts';
import { collect } from '../support/artifact-store-suite.ts';
import { fsArtifacts, s3Artifacts, type ArtifactCase, type ArtifactsUnderTest } from '../support/artifact-cases.ts';
import { gcDryRun, sha256Ref } from './asset-store-files.ts';
import { cleanEnv, killIfRunning } from './kiln-process.ts';
import { scrapeMetricSum, startServe, type ServeProcess } from './qr-serve.ts';
import { qrE2eStoreCases, type QrE2eStore } from './qr-stores.ts';

const MAX_UPLOAD_BYTES = 1_500_000;
/** Uploads in flight at once: enough to interleave good and bad ones, few enough for 2 cores. */
const UPLOAD_CONCURRENCY = 6;
/** Bounds the whole burst (normally ~10 s here). */
const SETTLE_TIMEOUT_MS = 45_000;
/** Where a permanent failure ends a run (`failed`, with a structured reason; not a replayable dead letter). */
const PERMANENT_FAILURE_END = 'failed';

const KILN_YAML = (artifactsYaml: string): string => `
${artifactsYaml}worker:
  pollMs: 50
pipelines:
  thumbnails:
    settings:
      maxUploadBytes: ${MAX_UPLOAD_BYTES}
      svgRenderBudgetMs: 2000
`;

/** The store's objects (ref, size, last write), sorted: a new or rewritten object changes it. */
async function objectsOf(artifacts: ArtifactsUnderTest): Promise<{ ref: string; size: number; modifiedAt: number }[]> {
  const objects = await collect(artifacts.store.list());
  return objects.map((o) => ({ ref: o.ref, size: o.size, modifiedAt: o.modifiedAt })).sort((a, b) => a.ref.localeCompare(b.ref));
}

/** The store's temps (writes in progress, or left by a crash). */
async function tempsOf(artifacts: ArtifactsUnderTest): Promise<string[]> {
  return (await collect(artifacts.store.listTemps())).map((t) => t.path).sort();
}

/** A TCP server that only counts who connects: the "remote" host of the hostile SVG. */
async function startConnectionTrap(): Promise<{ server: Server; url: string; connections: () => number }> {
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { server, url: `http://127.0.0.1:${port}`, connections: () => connections };
}

/** A deterministic shuffle (mulberry32), so a failing order can be replayed from the seed. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  let s = seed >>> 0;
  const random = (): number => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** Runs `tasks` with at most `limit` at once. */
async function inPool<T>(tasks: readonly (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array<T>(tasks.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await (tasks[i] as () => Promise<T>)();
    }
  };
  await Promise.all(Array.from({ length: limit }, lane));
  return results;
}

interface Burst {
  dir: string;
  artifacts: ArtifactsUnderTest;
  store: QrE2eStore;
  env: NodeJS.ProcessEnv;
  serve: ServeProcess;
  trap: Awaited<ReturnType<typeof startConnectionTrap>>;
  secretPath: string;
  corpus: CorpusImage[];
  bad: BadUpload[];
  hostileId: string;
  answers: Map<string, UploadAnswer>;
  /** Settled runs by asset id (accepted uploads only). */
  runs: Map<string, AssetRunJson>;
  seed: number;
}

/** The whole burst and its checks, on one kind of artifact store. */
function describeBurst(artifactCase: ArtifactCase): void {
  let burst: Burst | undefined;
  const cleanups: (() => Promise<void>)[] = [];

  function current(): Burst {
    assert.ok(burst, 'the burst ran (see the before hook)');
    return burst;
  }

  /** A temp dir, a migrated SQLite store, the connection trap, the secret PNG and a running server. */
  async function startWorld(): Promise<Pick<Burst, 'dir' | 'artifacts' | 'store' | 'env' | 'serve' | 'trap' | 'secretPath'>> {
    const dir = await mkdtemp(join(tmpdir(), 'kiln-assets-e2e-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const artifacts = await artifactCase.open(dir);
    cleanups.unshift(async () => artifacts.close());
    const store = await qrE2eStoreCases().sqlite.open(dir);
    cleanups.unshift(() => store.destroy());
    const trap = await startConnectionTrap();
    cleanups.unshift(() => new Promise<void>((resolve) => trap.server.close(() => resolve())));
    const secretPath = await writeSecretPng(dir);
    await writeFile(join(dir, 'kiln.yaml'), KILN_YAML(artifacts.yaml));
    const env = cleanEnv({ ...store.env, KILN_LOG_LEVEL: 'warn' });
    const serve = await startServe(store.args, dir, env);
    cleanups.unshift(async () => {
      killIfRunning(serve.proc);
      await serve.proc.exited;
    });
    return { dir, artifacts, store, env, serve, trap, secretPath };
  }

  before(async () => {
    const startedAt = Date.now();
    const world = await startWorld();
    const { serve } = world;
    const corpus = await buildCorpus('img');
    const bad = await buildBadUploads('bad', MAX_UPLOAD_BYTES);
    const hostileId = 'bad-hostile-svg';
    const hostile = hostileSvg({ remoteUrl: world.trap.url, localPath: world.secretPath });
    const sends: { assetId: string; send: () => Promise<UploadAnswer> }[] = [
      ...corpus.map((c) => ({ assetId: c.assetId, send: () => putAsset(serve.base, c.assetId, c.bytes, c.upload) })),
      ...bad.map((b) => ({ assetId: b.assetId, send: () => b.send(serve.base) })),
      { assetId: hostileId, send: () => putAsset(serve.base, hostileId, hostile, { mode: UploadMode.raw, contentType: 'image/svg+xml' }) },
    ];
    const seed = Number(process.env.KILN_TEST_SEED ?? startedAt % 1_000_000);
    const answered = await inPool(
      shuffled(sends, seed).map((s) => async () => [s.assetId, await s.send()] as const),
      UPLOAD_CONCURRENCY,
    );
    const answers = new Map(answered);
    const accepted = [...answers].filter(([, a]) => a.status === 202);
    const settled = await waitForRunsSettled(serve.base, accepted.map(([, a]) => a.body.run_id ?? ''), SETTLE_TIMEOUT_MS).catch((err: unknown) =>
      assert.fail(`${String(err)}\n--- serve ---\n${serve.proc.output()}`),
    );
    const runs = new Map(accepted.map(([id, a]) => [id, settled.get(a.body.run_id ?? '') as AssetRunJson]));
    burst = { ...world, corpus, bad, hostileId, answers, runs, seed };
    console.log(`seed ${seed} (KILN_TEST_SEED replays the order); ${sends.length} uploads settled in ${Date.now() - startedAt} ms, server start included`);
  });

  after(async () => {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  });

  describe('thumbnails end to end on SQLite with a real kiln serve', () => {
    test('every one of the 50 images publishes every profile in its format, fitted and upright, exactly as GET serves it', async () => {
      const { serve, corpus, answers, runs } = current();
      assert.equal(corpus.length, 50);
      const problems: string[] = [];
      for (const image of corpus) {
        const answer = answers.get(image.assetId);
        assert.equal(answer?.status, 202, `${image.assetId}: ${JSON.stringify(answer?.body)}`);
        const run = runs.get(image.assetId);
        if (run?.status !== 'succeeded') {
          problems.push(`${image.assetId}: run ${run?.status} ${JSON.stringify(run?.error)}`);
          continue;
        }
        for (const profile of PROFILES) {
          const read = await getProfile(serve.base, image.assetId, profile.name);
          problems.push(...(await profileProblems(image, profile, read)));
          if (read.version !== 1) problems.push(`${image.assetId}/${profile.name}: x-asset-version ${read.version}, want 1`);
        }
      }
      assert.deepEqual(problems, []);
    });
  });

  describe('bad uploads in the same burst', () => {
    test('each accepted bad upload ends failed with its stable code, on its first attempt, and publishes nothing', async () => {
      const { serve, bad, runs } = current();
      const problems: string[] = [];
      for (const upload of bad) {
        if (!('code' in upload.expect)) continue;
        const run = runs.get(upload.assetId);
        if (!run) {
          problems.push(`${upload.kind}: not accepted`);
          continue;
        }
        if (run.status !== PERMANENT_FAILURE_END) problems.push(`${upload.kind}: run ${run.status}, want ${PERMANENT_FAILURE_END}`);
        if (run.error?.code !== upload.expect.code) problems.push(`${upload.kind}: code ${run.error?.code}, want ${upload.expect.code}`);
        // A permanent failure is never retried as if transient.
        const failed = run.stages.filter((s) => s.error !== null);
        if (failed.length !== 1 || failed[0]?.attempts !== 1 || !upload.expect.stages.includes(failed[0].stage)) {
          problems.push(`${upload.kind}: failing stages ${JSON.stringify(failed.map((s) => [s.stage, s.attempts]))}, want one of ${upload.expect.stages.join('|')} once`);
        }
        if (run.stages.some((s) => s.stage === 'publish' && s.status === 'succeeded')) problems.push(`${upload.kind}: publish ran`);
        const asset = (await (await fetch(`${serve.base}/v1/assets/${upload.assetId}`)).json()) as { publications: Record<string, unknown> };
        if (Object.keys(asset.publications).length > 0) problems.push(`${upload.kind}: publications ${JSON.stringify(asset.publications)}`);
        for (const profile of PROFILES) {
          const read = await getProfile(serve.base, upload.assetId, profile.name);
          if (read.status !== 404) problems.push(`${upload.kind}/${profile.name}: GET answered ${read.status}`);
        }
      }
      assert.deepEqual(problems, []);
    });

    test('uploads over the size limit get 413 PAYLOAD_TOO_LARGE before anything is stored: no object, no temp file, no run', async () => {
      const { serve, bad, answers, artifacts } = current();
      const refused = bad.filter((b) => 'refused' in b.expect);
      assert.equal(refused.length, 3);
      for (const upload of refused) {
        const answer = answers.get(upload.assetId);
        assert.equal(answer?.status, 413, `${upload.kind} in the burst: ${JSON.stringify(answer?.body)}`);
        assert.equal(answer.body.code, 'PAYLOAD_TOO_LARGE');
      }
      // Once more with nothing else running, so "no new object" can be checked exactly.
      const objectsBefore = await objectsOf(artifacts);
      for (const upload of refused) {
        const again = await upload.send(serve.base);
        assert.deepEqual([again.status, again.body.code], [413, 'PAYLOAD_TOO_LARGE'], upload.kind);
      }
      assert.deepEqual(await objectsOf(artifacts), objectsBefore, 'no object was written or rewritten');
      assert.deepEqual(await tempsOf(artifacts), [], 'the partial temp files of the streamed uploads were removed');
      for (const upload of refused) {
        assert.equal((await fetch(`${serve.base}/v1/assets/${upload.assetId}`)).status, 404, `${upload.kind}: no asset`);
        const listed = (await (await fetch(`${serve.base}/v1/runs?subjectId=${upload.assetId}`)).json()) as unknown[];
        assert.deepEqual(listed, [], `${upload.kind}: no run`);
      }
    });

    test('an SVG with a script, a remote href and a local file href connects nowhere and never shows the local file (refused, or rendered without them)', async (t) => {
      const { serve, hostileId, runs, trap, artifacts } = current();
      const run = runs.get(hostileId);
      assert.ok(run, 'the SVG upload was accepted');
      assert.equal(trap.connections(), 0, 'no connection reached the remote host');
      if (run.status !== 'succeeded') {
        t.diagnostic(`hostile SVG refused: ${run.status} ${run.error?.code}`);
        assert.equal(run.status, PERMANENT_FAILURE_END);
        assert.match(run.error?.code ?? '', /^ASSET_/);
        assert.equal((await getProfile(serve.base, hostileId, 'thumb')).status, 404);
        return;
      }
      t.diagnostic('hostile SVG rendered with its dangerous parts removed');
      // Every pixel product of this run: the normalized intermediate and each published profile.
      const intermediate = stageOutput<{ artifact: string }>(run, 'transform');
      assert.ok(intermediate);
      const outputs: [string, Uint8Array][] = [['intermediate', await artifacts.store.get(intermediate.artifact)]];
      for (const profile of PROFILES) outputs.push([profile.name, (await getProfile(serve.base, hostileId, profile.name)).bytes]);
      for (const [name, bytes] of outputs) {
        const pixels = await decodePixels(bytes);
        assert.equal(pixels.contains(SECRET_COLOR), false, `${name}: the local file's color shows`);
        // The safe part still renders: the blue square in the top-left fifth.
        assert.ok(isNear(pixels.at(Math.floor(pixels.width / 10), Math.floor(pixels.height / 10)), [0, 0, 255]), `${name}: the blue square is missing`);
      }
    });
  });

  describe('work shared between assets', () => {
    test('byte-identical sources under different asset ids are transformed once: one build per distinct source, the copies are hits or waits', async () => {
      const { serve, runs, corpus } = current();
      const reachedTransform = [...runs.values()].filter((r) => (r.stages.find((s) => s.stage === 'transform')?.attempts ?? 0) > 0);
      const distinct = new Set(reachedTransform.map(sourceOf));
      assert.ok(reachedTransform.length - distinct.size >= 3, 'the corpus has byte-identical copies');
      const metric = (name: string, labels: Record<string, string>): Promise<number> => scrapeMetricSum([serve.base], name, labels);
      assert.equal(await metric('kiln_cache_builds_total', { cache: TRANSFORM_CACHE }), distinct.size);
      assert.equal(await metric('kiln_cache_requests_total', { cache: TRANSFORM_CACHE, result: 'miss' }), distinct.size);
      const shared = (await metric('kiln_cache_requests_total', { cache: TRANSFORM_CACHE, result: 'hit' })) + (await metric('kiln_cache_requests_total', { cache: TRANSFORM_CACHE, result: 'wait' }));
      assert.equal(shared, reachedTransform.length - distinct.size);
      // A copy serves the very bytes of its original.
      for (const copy of corpus.filter((c) => c.kind.endsWith('-copy'))) {
        const original = corpus.find((c) => `${c.kind}-copy` === copy.kind);
        assert.ok(original);
        for (const profile of PROFILES) {
          const reads: ProfileRead[] = await Promise.all([copy, original].map((image) => getProfile(serve.base, image.assetId, profile.name)));
          assert.equal(reads[0]?.etag, reads[1]?.etag, `${copy.kind}/${profile.name}`);
        }
      }
    });
  });

  describe('artifacts after the burst', () => {
    test('kiln gc --dry-run --grace 0 lists exactly the uploads of ended runs: every intermediate and output is referenced, and no temp file is left', async () => {
      const { dir, store, env, runs, corpus, artifacts } = current();
      const report = await gcDryRun(dir, store.args, env);
      const all = [...runs.values()];
      // A run that may still be replayed (dead-lettered, parked) keeps its upload; an ended one does not.
      const live = new Set(all.filter((r) => !['succeeded', 'failed', 'cancelled', 'superseded'].includes(r.status)).map(sourceOf));
      const expected = [...new Set(all.filter((r) => !live.has(sourceOf(r))).map(sourceOf))].sort();
      assert.deepEqual(report.collected.map((o) => o.ref).sort(), expected);
      assert.equal(report.young, 0);
      assert.equal(report.referenced + report.collected.length, report.scanned);
      // The uploads are stored byte for byte: each image's own hash is its source.
      for (const image of corpus) assert.equal(sourceOf(runs.get(image.assetId) as AssetRunJson), sha256Ref(image.bytes), image.assetId);
      assert.deepEqual(await tempsOf(artifacts), []);
    });
  });
}

for (const artifactCase of [fsArtifacts, s3Artifacts]) describe(`asset pipeline with ${artifactCase.name}`, () => describeBurst(artifactCase));
