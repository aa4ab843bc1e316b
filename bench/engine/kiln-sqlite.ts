/**
 * Child process: kiln on the SQLite store, a fresh database file in a temp dir (WAL,
 * synchronous=NORMAL as the store opens it). Prints one result line; removes the dir.
 * Usage: node --import tsx bench/engine/kiln-sqlite.ts --runs N --concurrency C [--submit single|bulk]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { parseEngineArgs } from './engine-args.ts';
import { emitResult } from './engine-result.ts';
import { runKilnBench, warmupRunsFor } from './kiln-bench.ts';

const args = parseEngineArgs(process.argv.slice(2));
const dir = mkdtempSync(join(tmpdir(), 'kiln-bench-sqlite-'));
try {
  const store = createSqliteStore({ path: join(dir, 'kiln.db') });
  await store.migrate();
  const result = await runKilnBench({
    system: 'kiln-sqlite',
    store,
    artifacts: createFsArtifactStore({ root: join(dir, 'artifacts') }),
    runs: args.runs,
    concurrency: args.concurrency,
    warmupRuns: warmupRunsFor(args.runs),
    submit: args.submit,
  });
  emitResult(result);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
