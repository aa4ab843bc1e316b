/**
 * Benchmark entry point: `npm run bench -- <suite> [flags]`.
 *   engine   5-stage no-op pipeline: kiln (memory, SQLite) vs BullMQ (private redis-server).
 *            Flags: --runs N (default 2000), --concurrency C (default 10), --only a,b
 *            Systems: kiln-memory, kiln-sqlite, bullmq. Writes bench/results/engine-<timestamp>.json.
 */
import { parseEngineArgs } from './engine/engine-args.ts';
import { runEngineSuite } from './engine/engine-suite.ts';

const USAGE = 'usage: npm run bench -- engine [--runs 2000] [--concurrency 10] [--only kiln-memory,kiln-sqlite,bullmq]';

const [suite, ...rest] = process.argv.slice(2);
if (suite === 'engine') {
  try {
    const { report } = await runEngineSuite(parseEngineArgs(rest));
    // A failed system leaves a "skipped: failed ..." row; the exit code says so too.
    if (report.results.some((r) => 'skipped' in r && r.skipped.startsWith('failed'))) process.exitCode = 1;
  } catch (err) {
    console.error((err as Error).message);
    console.error(USAGE);
    process.exitCode = 2;
  }
} else {
  console.error(suite ? `unknown suite "${suite}"` : 'no suite given');
  console.error(USAGE);
  process.exitCode = 2;
}
