/**
 * Fuzzing of every HTTP route (issue 14 point 6), CI size: several thousand fast-check requests
 * through fastify's inject, and a smaller pass over real HTTP, against a real kiln over a SQLite
 * file store and a real artifact dir (test/support/http-fuzz/). No answer may be a 5xx other than
 * a 503 with Retry-After, every error has a catalogued code and its status, no request hangs, and
 * the heap after GC stays flat. A failure prints the seed, the shrunk counterexample and how to
 * replay it (`FUZZ_SEED=... FUZZ_ROUTE=... npm run fuzz`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { formatReport, fuzzRoutes, heapAfterGc, openFuzzTarget, seedFromEnv, type FuzzTarget } from '../support/http-fuzz/fuzz.ts';
import { hintsOf, nothing, routeSpecOf } from '../support/http-fuzz/route-specs.ts';

/** Cases through inject in CI (FUZZ_RUNS overrides). */
const CI_RUNS = 4_000;
/** Cases over real HTTP in CI. */
const CI_HTTP_RUNS = 600;
/** Cases per route before the heap baseline is taken: code paths compiled, caches warm. */
const WARMUP_RUNS_PER_ROUTE = 5;
/** Heap growth allowed over the whole run, after GC. */
const HEAP_GROWTH_LIMIT_BYTES = 48 * 2 ** 20;
/** A request unanswered this long is a hang (the request deadline is 10 s, a QR wait at most 30 s). */
const HANG_MS = 45_000;

/** CI fuzzes the same cases every run (FUZZ_SEED overrides it; `npm run fuzz` takes fresh seeds). */
const CI_SEED = 20_261_202;

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;

describe('HTTP fuzzing of every route', () => {
  let target: FuzzTarget;
  const seed = seedFromEnv(CI_SEED);
  before(async () => {
    target = await openFuzzTarget();
    console.log(`http-fuzz: seed ${seed} (replay with FUZZ_SEED=${seed})`);
  });
  after(() => target.close());

  test('every registered route has a generator, and one without fails the fuzzer', () => {
    const keys = target.routes.map((r) => `${r.method} ${r.url}`);
    for (const key of ['PUT /v1/assets/:id', 'POST /v1/runs', 'GET /v1/qr/:hash', 'GET /dashboard/*', 'HEAD /v1/runs', 'GET /healthz']) assert.ok(keys.includes(key), key);
    assert.equal(new Set(keys).size, keys.length);
    const hints = hintsOf(target.seeds);
    for (const route of target.routes) routeSpecOf(route, target.seeds, hints);
    assert.throws(() => routeSpecOf({ method: 'POST', url: '/v1/new-route' }, target.seeds, hints), /POST \/v1\/new-route has no generator: add "POST \/v1\/new-route" to test\/support\/http-fuzz\/route-specs\.ts/);
  });

  test('through inject: no 5xx but a 503 with Retry-After, catalogued codes, no hang, flat heap (heap used after a forced GC)', async () => {
    const runs = Number(process.env.FUZZ_RUNS ?? CI_RUNS);
    await fuzzRoutes(target, { runs: WARMUP_RUNS_PER_ROUTE * target.routes.length, seed: seed ^ 0x5eed, hangMs: HANG_MS });
    const heapBefore = heapAfterGc();
    const report = await fuzzRoutes(target, { runs, seed, hangMs: HANG_MS });
    const heapAfter = heapAfterGc();
    console.log(formatReport(report, seed));
    console.log(`  heap used after GC: ${mb(heapBefore)} before, ${mb(heapAfter)} after`);
    assert.ok(report.cases >= runs * 0.95, `${report.cases} cases run`);
    assert.ok(heapAfter - heapBefore < HEAP_GROWTH_LIMIT_BYTES, `heap grew by ${mb(heapAfter - heapBefore)}`);
  });

  test('over real HTTP (fetch): the same property', async () => {
    const report = await fuzzRoutes(target, { runs: CI_HTTP_RUNS, seed: seed ^ 0x4777, hangMs: HANG_MS, transport: 'http' });
    console.log(formatReport(report, seed ^ 0x4777).replace('http-fuzz:', 'http-fuzz (real HTTP):'));
    assert.ok(report.cases >= CI_HTTP_RUNS * 0.9, `${report.cases} cases run`);
  });
});

/** The planted routes' specs: every route needs one, planted or not. */
const PLANTED_SPECS = { 'GET /test/planted/:id': nothing, 'GET /test/hang/:id': nothing };

test('the fuzzer catches a planted 500 and a planted hang, and says how to replay them', async () => {
  const planted = await openFuzzTarget({
    plant: (app) => {
      app.get<{ Params: { id: string } }>('/test/planted/:id', async (request) => {
        if (request.params.id.includes('.')) throw new Error('planted bug');
        return { ok: true };
      });
      // A callback-style handler has no promise for the request deadline to race: it can really hang.
      app.get<{ Params: { id: string } }>('/test/hang/:id', (request, reply) => {
        if (!request.params.id.includes('.')) void reply.send({ ok: true });
      });
    },
  });
  try {
    await assert.rejects(
      fuzzRoutes(planted, { runs: 200, seed: 1, route: 'GET /test/planted/:id', hangMs: HANG_MS, specs: PLANTED_SPECS }),
      (err: Error) => {
        assert.match(err.message, /FUZZ_SEED=1 FUZZ_ROUTE='GET \/test\/planted\/:id'/);
        assert.match(err.message, /Counterexample: \[\{"method":"GET","url":"\/test\/planted\//);
        assert.match(err.message, /violation: status 500/);
        return true;
      },
    );
    await assert.rejects(
      fuzzRoutes(planted, { runs: 200, seed: 1, route: 'GET /test/hang/:id', hangMs: 300, specs: PLANTED_SPECS }),
      /FUZZ_ROUTE='GET \/test\/hang\/:id'[\s\S]*violation: no answer within 300 ms/,
    );
  } finally {
    await planted.close();
  }
});
