/**
 * Identical work is done once, with real processes: 500 identical `POST /v1/qr` fired at once at
 * running `kiln serve` processes (each with its embedded worker) must cause exactly one execution
 * of the `render` stage, counted by `kiln_stage_executions_total` summed over every process's
 * `/metrics`, and every request must get 200 and the same bytes, which a real decoder reads back
 * to the content. One test body, three deployments: one server on SQLite, two servers sharing one
 * SQLite file, two servers on one PostgreSQL schema.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fsArtifacts, inlineArtifacts, s3Artifacts, type ArtifactCase } from '../support/artifact-cases.ts';
import { decodeQr } from '../support/qr-decode.ts';
import { cleanEnv, killIfRunning, waitUntil } from './kiln-process.ts';
import { scrapeMetricSum, startServe, type ServeProcess } from './qr-serve.ts';
import { qrE2eStoreCases, type QrE2eStoreCase } from './qr-stores.ts';

const REQUESTS = 500;
const CONTENT = 'https://kiln.example/qr?campaign=burst&n=500&lang=fr#café';
/** A case takes a few seconds (process start-up dominates); this bounds a hung process. */
const CASE_TIMEOUT_MS = 60_000;
const RENDER = { pipeline: 'qr-code', stage: 'render' } as const;

interface Answer {
  status: number;
  contentType: string | null;
  body: Uint8Array;
}

/** Fires every request at once (no pool, no pacing), spread round-robin over `bases`. */
async function fireAll(bases: readonly string[]): Promise<Answer[]> {
  // The longest wait: on a loaded CI machine 500 requests may take longer than the default 2 s,
  // and a 202 would say nothing about single-flight.
  const body = JSON.stringify({ content: CONTENT, wait: 30_000 });
  return Promise.all(
    Array.from({ length: REQUESTS }, async (_, i) => {
      const res = await fetch(`${bases[i % bases.length]}/v1/qr`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      return { status: res.status, contentType: res.headers.get('content-type'), body: new Uint8Array(await res.arrayBuffer()) };
    }),
  );
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

const { sqlite, postgres } = qrE2eStoreCases();
const CASES: { name: string; store: QrE2eStoreCase; servers: number; artifacts: ArtifactCase }[] = [
  { name: 'one kiln serve on SQLite', store: sqlite, servers: 1, artifacts: fsArtifacts },
  { name: 'two kiln serve processes sharing one SQLite file', store: sqlite, servers: 2, artifacts: fsArtifacts },
  { name: 'two kiln serve processes on one PostgreSQL', store: postgres, servers: 2, artifacts: fsArtifacts },
  { name: 'two kiln serve processes sharing one SQLite file and one S3 bucket', store: sqlite, servers: 2, artifacts: s3Artifacts },
  // The default setting: the image is a blob of the store, the one object the store lists.
  { name: 'two kiln serve processes sharing one SQLite file, the image inline', store: sqlite, servers: 2, artifacts: inlineArtifacts },
  { name: 'two kiln serve processes on one PostgreSQL, the image inline', store: postgres, servers: 2, artifacts: inlineArtifacts },
];

for (const c of CASES) describe(c.name, { skip: c.store.skip }, () => {
  test(`${REQUESTS} concurrent identical POST /v1/qr render once and all get 200 with the same PNG, which decodes to the content`, { timeout: CASE_TIMEOUT_MS }, async (t) => {
    const startedAt = Date.now();
    const dir = await mkdtemp(join(tmpdir(), 'kiln-qr-burst-'));
    const servers: ServeProcess[] = [];
    const store = await c.store.open(dir);
    const artifacts = await c.artifacts.open(dir, store.store.blobs);
    t.after(async () => {
      for (const s of servers) killIfRunning(s.proc);
      await Promise.all(servers.map((s) => s.proc.exited));
      await store.destroy();
      artifacts.close();
      await rm(dir, { recursive: true, force: true });
    });
    // One artifact store for every process: a directory as a shared mount would be, or one bucket.
    await writeFile(join(dir, 'kiln.yaml'), artifacts.yaml);
    const env = cleanEnv({ ...store.env, KILN_LOG_LEVEL: 'warn' });
    const started = await Promise.allSettled(Array.from({ length: c.servers }, () => startServe(store.args, dir, env)));
    for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
    for (const s of started) if (s.status === 'rejected') throw s.reason;
    const bases = servers.map((s) => s.base);
    const outputs = (): string => servers.map((s, i) => `--- serve ${i} ---\n${s.proc.output()}`).join('\n');

    const burstAt = Date.now();
    const answers = await fireAll(bases);
    t.diagnostic(`${REQUESTS} requests over ${c.servers} server(s) answered in ${Date.now() - burstAt} ms`);

    const firstOther = answers.find((a) => a.status !== 200);
    assert.deepEqual(countBy(answers, (a) => String(a.status)), { 200: REQUESTS }, `${firstOther ? Buffer.from(firstOther.body).toString() : ''}\n${outputs()}`);
    assert.deepEqual(countBy(answers, (a) => String(a.contentType)), { 'image/png': REQUESTS });
    const distinct = countBy(answers, (a) => sha256(a.body));
    assert.equal(Object.keys(distinct).length, 1, `every body is byte-identical: ${JSON.stringify(distinct)}`);
    // The bodies are identical, so decoding one decodes them all.
    assert.deepEqual(await decodeQr(answers[0]?.body ?? new Uint8Array(), 'image/png'), [CONTENT]);

    // The process that ran render counts it after its commit returns, which may be a moment after
    // another process committed publish and released the requests: await the count, then check it.
    const renders = await waitUntil(
      'the render execution to be counted',
      async () => {
        const n = await scrapeMetricSum(bases, 'kiln_stage_executions_total', RENDER);
        return n >= 1 ? n : undefined;
      },
      5_000,
    );
    assert.equal(renders, 1, `kiln_stage_executions_total{pipeline="qr-code",stage="render"} summed over ${c.servers} process(es)`);
    assert.equal(await scrapeMetricSum(bases, 'kiln_cache_builds_total', { cache: 'qr' }), 1, 'one single-flight build of the image');
    const objects = [];
    for await (const object of artifacts.store.list()) objects.push(object);
    assert.deepEqual(objects.map((o) => o.ref), [`sha256:${sha256(answers[0]?.body ?? new Uint8Array())}`], 'the one image is the one object in the artifact store');
    if (c.artifacts === inlineArtifacts) assert.equal(existsSync(join(dir, 'artifacts', 'objects')), false, 'inline: no object file was written');
    // The AWS SDK's Node 20 warning is kept out of kiln's output (README, S3 artifacts).
    assert.doesNotMatch(outputs(), /NodeVersionSupportWarning/);
    t.diagnostic(`case wall time ${Date.now() - startedAt} ms`);
  });
});
