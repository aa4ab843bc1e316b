/**
 * Fuzzing of every HTTP route (issue 14 point 6), CI size: several thousand fast-check requests
 * through fastify's inject against a real kiln over a SQLite file store and a real artifact dir
 * (test/support/http-fuzz/). No answer may be a 5xx other than a 503 with Retry-After, every error
 * has a catalogued code, no request hangs, and the heap after GC stays flat. A failure prints the
 * seed, the shrunk counterexample and how to replay it (`FUZZ_SEED=... npm run fuzz`).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { formatReport, fuzzRoutes, heapAfterGc, openFuzzTarget, seedFromEnv, type FuzzTarget } from '../support/http-fuzz/fuzz.ts';

/** Cases in CI (FUZZ_RUNS overrides). */
const CI_RUNS = 4_000;
/** Cases per route before the heap baseline is taken: code paths compiled, caches warm. */
const WARMUP_RUNS_PER_ROUTE = 5;
/** Heap growth allowed over the whole run, after GC. */
const HEAP_GROWTH_LIMIT_BYTES = 48 * 2 ** 20;

let target: FuzzTarget;
before(async () => {
  target = await openFuzzTarget();
});
after(() => target.close());

test('every registered route has a generator, and the fuzzer sees them all', () => {
  const keys = target.routes.map((r) => `${r.method} ${r.url}`);
  for (const key of ['PUT /v1/assets/:id', 'POST /v1/runs', 'GET /v1/qr/:hash', 'GET /dashboard/*', 'HEAD /v1/runs', 'GET /healthz']) assert.ok(keys.includes(key), key);
  assert.equal(new Set(keys).size, keys.length);
});

test('fuzzing every route: no 5xx but a 503 with Retry-After, catalogued codes, no hang, flat heap', async () => {
  const seed = seedFromEnv();
  const runs = Number(process.env.FUZZ_RUNS ?? CI_RUNS);
  console.log(`http-fuzz: seed ${seed} (replay with FUZZ_SEED=${seed})`);
  await fuzzRoutes(target, { runs: WARMUP_RUNS_PER_ROUTE * target.routes.length, seed: seed ^ 0x5eed, hangMs: 45_000 });
  const heapBefore = heapAfterGc();
  const report = await fuzzRoutes(target, { runs, seed, hangMs: 45_000 });
  const heapAfter = heapAfterGc();
  console.log(formatReport(report, seed));
  console.log(`  heap used after GC: ${(heapBefore / 2 ** 20).toFixed(1)} MB before, ${(heapAfter / 2 ** 20).toFixed(1)} MB after`);
  assert.ok(report.cases >= runs * 0.95, `${report.cases} cases run`);
  assert.ok(heapAfter - heapBefore < HEAP_GROWTH_LIMIT_BYTES, `heap grew by ${((heapAfter - heapBefore) / 2 ** 20).toFixed(1)} MB`);
});
