/**
 * Child process: kiln on the in-memory store. Prints one result line.
 * Usage: node --import tsx bench/engine/kiln-memory.ts --runs N --concurrency C [--submit single|bulk]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import { createMemoryStore } from '../../src/stores/memory/index.ts';
import { parseEngineArgs } from './engine-args.ts';
import { emitResult } from './engine-result.ts';
import { runKilnBench, warmupRunsFor } from './kiln-bench.ts';

const args = parseEngineArgs(process.argv.slice(2));
// The no-op stages never write artifacts; the directory only exists because the store needs a root.
const dir = mkdtempSync(join(tmpdir(), 'kiln-bench-memory-'));
try {
  const store = createMemoryStore();
  await store.migrate();
  const result = await runKilnBench({
    system: 'kiln-memory',
    store,
    artifacts: createFsArtifactStore({ root: join(dir, 'artifacts') }),
    runs: args.runs,
    concurrency: args.concurrency,
    warmupRuns: warmupRunsFor(args.runs),
    submit: args.submit,
    serveObservability: args.serveObservability,
  });
  emitResult(result);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
