/**
 * Real data for the fuzzer to hit: before fuzzing, the harness's worker runs a few runs to each
 * end state (succeeded, dead-lettered, parked, queued), an asset to its publications and a QR
 * code to its image, so valid-looking ids reach handlers that find something. The ids read back
 * through the API are what the route generators draw from.
 */
import { readdir } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { DASHBOARD_DIR } from '../../../src/http/routes/dashboard.ts';
import { solidImage, simpleSvg, truncatedJpeg } from '../asset-fixtures.ts';
import type { HttpHarness } from '../../integration/http-harness.ts';

/** Values taken from a seeded store. */
export interface FuzzSeeds {
  runIds: string[];
  jobIds: string[];
  queues: string[];
  pipelines: string[];
  subjectIds: string[];
  assetIds: string[];
  profiles: string[];
  qrHashes: string[];
  artifactRefs: string[];
  /** ETags the server handed out (QR images, published assets), for If-None-Match. */
  etags: string[];
  errorCodes: string[];
  dashboardFiles: string[];
  /** Valid image bytes (and a truncated one) for uploads. */
  images: Buffer[];
}

async function json<T>(app: FastifyInstance, url: string): Promise<T> {
  const res = await app.inject({ method: 'GET', url });
  if (res.statusCode !== 200) throw new Error(`seeding: GET ${url} answered ${res.statusCode}: ${res.body}`);
  return res.json<T>();
}

async function send(app: FastifyInstance, method: 'POST' | 'PUT', url: string, payload: string | Buffer, contentType: string): Promise<Record<string, unknown>> {
  const res = await app.inject({ method, url, payload, headers: { 'content-type': contentType } });
  if (res.statusCode >= 300) throw new Error(`seeding: ${method} ${url} answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

/** Seeds `h`'s store through its API with its worker running, then stops the worker. */
export async function seedStore(h: HttpHarness): Promise<FuzzSeeds> {
  const { app } = h;
  const images = [await solidImage('png'), await solidImage('jpeg'), simpleSvg(), await truncatedJpeg()];
  h.worker.start();
  const submit = (input: unknown, extra: Record<string, unknown> = {}) => send(app, 'POST', '/v1/runs', JSON.stringify({ pipeline: 'demo.sleep', input, ...extra }), 'application/json');
  const ok = await submit({ delayMs: 0 }, { subjectId: 'fuzz-subject', subjectVersion: 1 });
  const dead = await submit({ delayMs: 0, failAt: 'process', failWith: 'retryable' });
  const parked = await submit({ delayMs: 0, failAt: 'prepare', failWith: 'intervention' });
  const failed = await submit({ delayMs: 0, failAt: 'finish', failWith: 'permanent' });
  const asset = await send(app, 'PUT', '/v1/assets/fuzz-asset', images[0]!, 'image/png');
  const qr = await app.inject({ method: 'POST', url: '/v1/qr', payload: { content: 'fuzz', wait: 20_000 } });
  if (qr.statusCode !== 200) throw new Error(`seeding: POST /v1/qr answered ${qr.statusCode}: ${qr.body}`);
  await h.waitForStatus(String(ok.id), ['succeeded']);
  await h.waitForStatus(String(dead.id), ['dead_lettered']);
  await h.waitForStatus(String(parked.id), ['parked']);
  await h.waitForStatus(String(failed.id), ['failed']);
  await h.waitForStatus(String(asset.run_id), ['succeeded', 'failed', 'dead_lettered'], 60_000);
  await h.worker.stop(1_000);
  // Left queued: the worker is stopped.
  await submit({ delayMs: 600_000 });

  const runs = await json<{ id: string; subjectId: string | null; error: { code: string } | null }[]>(app, '/v1/runs?limit=500');
  const jobs = await json<{ id: string; queue: string }[]>(app, '/v1/jobs?limit=500');
  const queues = await json<{ queue: string }[]>(app, '/v1/queues');
  const described = await json<{ publications: Record<string, unknown> }>(app, '/v1/assets/fuzz-asset');
  const publications = await json<{ artifactRef: string }[]>(app, '/v1/publications?subjectId=fuzz-asset');
  const artifactRefs = publications.map((p) => p.artifactRef);
  const qrHash = [String(qr.headers.etag).replaceAll('"', '')];
  const profiles = Object.keys(described.publications);
  const files = await readdir(DASHBOARD_DIR, { recursive: true });
  return {
    runIds: runs.map((r) => r.id),
    jobIds: jobs.map((j) => j.id),
    queues: queues.map((q) => q.queue),
    pipelines: ['demo.sleep', 'qr-code', 'thumbnails'],
    subjectIds: [...new Set(runs.flatMap((r) => (r.subjectId ? [r.subjectId] : [])))],
    assetIds: ['fuzz-asset'],
    profiles: profiles.length > 0 ? profiles : ['thumb'],
    qrHashes: qrHash,
    artifactRefs,
    etags: [...qrHash, ...artifactRefs.map((r) => r.slice('sha256:'.length))].map((t) => `"${t}"`),
    errorCodes: [...new Set(runs.flatMap((r) => (r.error ? [r.error.code] : [])))],
    dashboardFiles: files.map((f) => f.split('\\').join('/')),
    images,
  };
}
