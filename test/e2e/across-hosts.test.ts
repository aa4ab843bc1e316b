/**
 * Two hosts, as teams deploy kiln: two `kiln serve` processes, each in a working directory of its
 * own (no shared filesystem: their `artifacts.root` folders stay empty), sharing one store
 * (PostgreSQL; in a second run Redis) and one S3 bucket (s3rver, or `KILN_S3_URL`).
 *
 * - An asset uploaded to one host is rendered (by either) and served by both, byte for byte.
 * - The host that holds the render job of a second upload is SIGKILLed in the middle of the
 *   render (while a render product is being built); the other host takes the job over once its lease expires. The run succeeds with
 *   every stage once in the ledger, each profile has exactly one publication (counted beside
 *   kiln) served right, and the bucket holds only whole objects: every object's sha256 is the
 *   content address in its key (an S3 PUT is atomic: a writer killed mid-upload leaves nothing).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { createS3Client, parseS3Url, type S3ArtifactsSettings } from '../../src/artifacts/s3-client.ts';
import { RENDER_CACHE } from '../../src/pipelines/thumbnails/stages.ts';
import { photoJpeg } from '../support/asset-fixtures.ts';
import { sharedS3 } from '../support/s3-server.ts';
import type { CorpusImage } from './asset-corpus.ts';
import { PROFILES, profileProblems } from './asset-expect.ts';
import { getProfile, getRunJson, putAsset, SETTLED_RUN_STATUSES, UploadMode, type AssetRunJson } from './asset-http.ts';
import { listObjectFiles } from './asset-store-files.ts';
import { cleanEnv, exitWithin, waitUntil } from './kiln-process.ts';
import { startServe, type ServeProcess } from './qr-serve.ts';
import { openE2eScene, qrE2eStoreCases, type E2eScene, type QrE2eStoreCase } from './qr-stores.ts';

const LEASE_MS = 1_500;
/** Bounds each wait on the hosts. */
const STEP_TIMEOUT_MS = 30_000;
/**
 * Bounds the survivor's finishing of the killed render. The dead host leaves the render cache
 * entries it was building held for their builder lease (60 s, thumbnails' PRODUCT_LEASE_MS): the
 * survivor waits for that lease to expire, single-flight, before it builds them itself.
 */
const RECOVERY_TIMEOUT_MS = 120_000;
const STAGES = ['ingest', 'inspect', 'transform', 'render', 'publish', 'cleanup'];

/**
 * Artifacts under `./artifacts` of the host's own directory unless `KILN_ARTIFACTS_URL` (S3) says
 * otherwise; inline artifacts off, so every render is an object of that tier (the bucket checks).
 */
const KILN_YAML = `
artifacts:
  root: ./artifacts
  inlineMaxBytes: 0
worker:
  pollMs: 50
  reapMs: 50
pipelines:
  thumbnails:
    stages:
      render: { leaseMs: ${LEASE_MS}, heartbeatMs: 300 }
`;

/** One host: its own directory and its `kiln serve`. */
interface Host extends ServeProcess {
  name: string;
  dir: string;
  workerId: string;
}

/** Starts a host in a new directory of its own, on the shared store and bucket. */
async function startHost(t: TestContext, scene: E2eScene, s3Env: Record<string, string>, name: string): Promise<Host> {
  const dir = await mkdtemp(join(tmpdir(), `kiln-host-${name}-`));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'kiln.yaml'), KILN_YAML);
  const workerId = `host-${name}`;
  const env = cleanEnv({ ...scene.store.env, ...s3Env, KILN_LOG_LEVEL: 'warn' });
  const serve = await startServe(['--worker-id', workerId, ...scene.store.args], dir, env);
  scene.procs.push(serve.proc);
  return { ...serve, name, dir, workerId };
}

/** Waits until run `runId` has settled, asking `host`. */
function settled(host: Host, runId: string, timeoutMs = STEP_TIMEOUT_MS): Promise<AssetRunJson> {
  return waitUntil(
    `run ${runId} to settle (asking ${host.name})`,
    async () => {
      const run = await getRunJson(host.base, runId);
      return SETTLED_RUN_STATUSES.includes(run.status) ? run : undefined;
    },
    timeoutMs,
    100,
  );
}

/** A photo as the profile checks describe it. */
function photoImage(assetId: string, bytes: Buffer, width: number, height: number): CorpusImage {
  return { assetId, kind: 'photo', bytes, upload: { mode: UploadMode.raw, contentType: 'image/jpeg' }, upright: { width, height }, pixels: () => [] };
}

/** Problems of every profile of `image` as `host` serves it (version 1 each); empty when right. */
async function servedProblems(host: Host, image: CorpusImage): Promise<string[]> {
  const problems: string[] = [];
  for (const profile of PROFILES) {
    const read = await getProfile(host.base, image.assetId, profile.name);
    problems.push(...(await profileProblems(image, profile, read)).map((p) => `${host.name}: ${p}`));
    if (read.version !== 1) problems.push(`${host.name}: ${image.assetId}/${profile.name} is version ${read.version}`);
  }
  return problems;
}

/** Every object under the settings' prefix, read back from the bucket: its key and its bytes' sha256. */
async function bucketObjects(settings: S3ArtifactsSettings): Promise<{ key: string; sha256: string }[]> {
  const client = createS3Client(settings);
  const { bucket, prefix } = parseS3Url(settings.url);
  try {
    const out: { key: string; sha256: string }[] = [];
    let token: string | undefined;
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
      for (const { Key } of page.Contents ?? []) {
        if (Key === undefined) continue;
        const body = await (await client.send(new GetObjectCommand({ Bucket: bucket, Key }))).Body?.transformToByteArray();
        out.push({ key: Key, sha256: createHash('sha256').update(body ?? new Uint8Array()).digest('hex') });
      }
      token = page.NextContinuationToken;
    } while (token !== undefined);
    return out;
  } finally {
    client.destroy();
  }
}

/** Uploads a photo to `to` and checks both hosts serve its renders. */
async function uploadOnOneServeOnBoth(to: Host, other: Host): Promise<void> {
  const image = photoImage('across-hosts', await photoJpeg(800, 600), 800, 600);
  const accepted = await putAsset(to.base, image.assetId, image.bytes, image.upload);
  assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
  const run = await settled(other, accepted.body.run_id ?? '');
  assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
  assert.deepEqual([...(await servedProblems(other, image)), ...(await servedProblems(to, image))], []);
  for (const profile of PROFILES) {
    const [a, b] = await Promise.all([getProfile(to.base, image.assetId, profile.name), getProfile(other.base, image.assetId, profile.name)]);
    assert.deepEqual([a.etag, Buffer.from(a.bytes).equals(Buffer.from(b.bytes))], [b.etag, true], `${profile.name}: the same bytes from both hosts`);
  }
}

/**
 * Uploads a large photo to `hosts[0]`, SIGKILLs whichever host holds its render job while it
 * builds a render, and returns the run as the surviving host finished it, with the survivor.
 */
async function killMidRender(scene: E2eScene, hosts: readonly Host[], image: CorpusImage): Promise<{ run: AssetRunJson; survivor: Host }> {
  const [first] = hosts as [Host, Host];
  const accepted = await putAsset(first.base, image.assetId, image.bytes, image.upload);
  assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
  const runId = accepted.body.run_id ?? '';
  // Mid-render: a host holds the render job's lease and a render product is being built (this
  // run is the only one rendering). The probe answers that host, or the run's status if it ended
  // first (a miss).
  const { store } = scene.store;
  const seen = await waitUntil(
    'a host to be building the renders',
    async () => {
      const [job] = await store.reads.listJobs({ runId, queue: 'thumbnails.render', state: 'leased', limit: 1 });
      const holder = hosts.find((h) => h.workerId === job?.leaseOwner);
      if (holder !== undefined && (await store.cache.list({ cache: RENDER_CACHE, status: 'building', limit: 1 })).length > 0) return holder;
      const status = (await store.reads.getRun(runId))?.run.status;
      return status === 'queued' || status === 'running' ? undefined : status;
    },
    STEP_TIMEOUT_MS,
    10,
  );
  assert.ok(typeof seen !== 'string', `the run ended (${String(seen)}) before a host was seen building its renders`);
  const victim = seen;
  victim.proc.child.kill('SIGKILL');
  assert.equal((await exitWithin(victim.proc, `${victim.name} to die`, STEP_TIMEOUT_MS)).signal, 'SIGKILL');
  const survivor = hosts.find((h) => h !== victim) as Host;
  const run = await settled(survivor, runId, RECOVERY_TIMEOUT_MS);
  return { run, survivor };
}

async function acrossHosts(t: TestContext, storeCase: QrE2eStoreCase): Promise<void> {
  const startedAt = Date.now();
  const scene = await openE2eScene(t, storeCase, 'kiln-hosts-');
  const s3 = await sharedS3();
  const settings = s3.newStore();
  const s3Env = s3.envOf(settings);
  const hosts = [await startHost(t, scene, s3Env, 'a'), await startHost(t, scene, s3Env, 'b')];

  await uploadOnOneServeOnBoth(hosts[0] as Host, hosts[1] as Host);

  const image = photoImage('killed-mid-render', await photoJpeg(3_000, 2_000), 3_000, 2_000);
  const { run, survivor } = await killMidRender(scene, hosts, image);
  assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
  const render = run.stages.find((s) => s.stage === 'render');
  assert.ok((render?.attempts ?? 0) >= 2, `render was attempted again after the kill (${render?.attempts} attempts)`);
  const { store } = scene.store;
  assert.deepEqual((await store.reads.readLedger(run.id)).map((e) => e.stage), STAGES, 'every stage recorded once');
  assert.equal(await scene.store.countPublications(image.assetId), PROFILES.length, 'exactly one publication per profile');
  assert.deepEqual(await servedProblems(survivor, image), []);

  const objects = await bucketObjects(settings);
  assert.deepEqual(
    objects.filter((o) => !o.key.endsWith(`/${o.sha256}`)).map((o) => o.key),
    [],
    'every object in the bucket is whole: its sha256 is the content address in its key',
  );
  for (const profile of PROFILES) {
    const publication = await store.publications.get(image.assetId, profile.name);
    const hex = publication?.artifactRef.replace(/^sha256:/, '');
    assert.ok(objects.some((o) => o.sha256 === hex), `${profile.name} publishes an object in the bucket`);
  }
  for (const host of hosts) assert.deepEqual(await listObjectFiles(join(host.dir, 'artifacts')), [], `${host.name} kept no object on its own disk`);
  t.diagnostic(`${objects.length} objects in the bucket; wall time ${Date.now() - startedAt} ms`);
}

const { postgres, redis } = qrE2eStoreCases();
for (const storeCase of [postgres, redis]) {
  describe(`two kiln serve hosts sharing ${storeCase.name} and one S3 bucket`, { skip: storeCase.skip }, () => {
    test('an asset uploaded to one is served by the other; a host SIGKILLed mid-render leaves one publication per profile and only whole objects', { timeout: 240_000 }, (t) =>
      acrossHosts(t, storeCase),
    );
  });
}
