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
import { runKilnBench, STAGE_COUNT, warmupRunsFor, type MeasuredPhase } from './kiln-bench.ts';
import { startStatementTimer, statementReport, type StatementTimer } from './sqlite-statement-timer.ts';

/** Times the measured phase's statements (`--sql-statements`), reported per stage transition. */
function statementPhase(transitions: number): MeasuredPhase {
  let timer: StatementTimer | undefined;
  return {
    start: () => (timer = startStatementTimer()),
    end: () => ({ sqlStatements: statementReport(timer?.stop() ?? [], transitions) }),
  };
}

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
    serveObservability: args.serveObservability,
    ...(args.sqlStatements ? { measuredPhase: statementPhase(args.runs * STAGE_COUNT) } : {}),
  });
  emitResult(result);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
