/**
 * `npm run fuzz`: the HTTP fuzzer at length. FUZZ_RUNS cases in all (default 50,000), FUZZ_SEED
 * to replay a run, FUZZ_ROUTE (`METHOD url`) and FUZZ_PATH to replay one failure, FUZZ_TRANSPORT=http
 * to send over real HTTP instead of inject, FUZZ_WORKER=all to run every queue meanwhile. Prints progress,
 * a summary (cases, statuses, error codes, cases/s) and the heap used after GC before and after.
 */
import { fuzzRoutes, formatReport, heapAfterGc, openFuzzTarget, seedFromEnv } from './fuzz.ts';

const runs = Number(process.env.FUZZ_RUNS ?? 50_000);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`FUZZ_RUNS must be a positive integer, not ${process.env.FUZZ_RUNS}`);
const seed = seedFromEnv();
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;

const target = await openFuzzTarget({ worker: process.env.FUZZ_WORKER === 'all' ? 'all' : 'qr' });
try {
  console.log(`http-fuzz: ${target.routes.length} routes, ${runs} cases, seed ${seed} (FUZZ_SEED=${seed} replays)`);
  const heapBefore = heapAfterGc();
  const report = await fuzzRoutes(target, {
    runs,
    seed,
    hangMs: 60_000,
    ...(process.env.FUZZ_TRANSPORT === 'http' ? { transport: 'http' as const } : {}),
    ...(process.env.FUZZ_ROUTE ? { route: process.env.FUZZ_ROUTE } : {}),
    ...(process.env.FUZZ_PATH ? { path: process.env.FUZZ_PATH } : {}),
    onRoute: (route, cases) => console.log(`  ${route}: ${cases} cases ok, heap ${mb(process.memoryUsage().heapUsed)}`),
  });
  const heapAfter = heapAfterGc();
  console.log(formatReport(report, seed));
  console.log(`  heap used after GC: ${mb(heapBefore)} before, ${mb(heapAfter)} after (${heapAfter >= heapBefore ? '+' : ''}${mb(heapAfter - heapBefore)})`);
} finally {
  await target.close();
}
