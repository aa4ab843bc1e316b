/**
 * Child process of the scale suite's worker curve: one kiln worker process on the suite's
 * PostgreSQL schema, serving the bench's 5-stage no-op pipeline. Protocol on stdio: prints
 * `READY` once its worker runs; on a `mark` line it notes its CPU time; on `stop` it stops the
 * worker, prints a result line with the CPU it spent since the mark, and exits.
 * Usage: KILN_PG_URL=... KILN_BENCH_SCHEMA=... node --import tsx bench/scale/chain-worker.ts --concurrency C
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { createFsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import { createKiln } from '../../src/engine/create-kiln.ts';
import { createPostgresStore } from '../../src/stores/postgres/index.ts';
import { positiveInt } from '../engine/engine-args.ts';
import { emitResultLine } from '../engine/engine-result.ts';
import { benchPipeline } from '../engine/kiln-bench.ts';

const { values } = parseArgs({ args: process.argv.slice(2), options: { concurrency: { type: 'string' } } });
const concurrency = positiveInt('concurrency', values.concurrency, 10);
const url = process.env['KILN_PG_URL'];
const schema = process.env['KILN_BENCH_SCHEMA'];
if (!url || !schema) throw new Error('KILN_PG_URL and KILN_BENCH_SCHEMA must be set');

const dir = mkdtempSync(join(tmpdir(), 'kiln-bench-worker-'));
const store = createPostgresStore({ connectionString: url, schema });
const kiln = createKiln({ store, artifacts: createFsArtifactStore({ root: dir }), pipelines: [benchPipeline(concurrency)] });
const worker = kiln.createWorker({ pollMs: 5 });
worker.start();
process.stdout.write('READY\n');

let mark = process.cpuUsage();
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'mark') mark = process.cpuUsage();
  if (line !== 'stop') continue;
  const cpu = process.cpuUsage(mark);
  await worker.stop(1_000);
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  emitResultLine({ cpuMs: Math.round((cpu.user + cpu.system) / 1_000) });
  break;
}
// The open stdin pipe would keep the process alive.
process.exit(0);
