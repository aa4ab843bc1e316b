/**
 * Child process: the same 5-stage no-op chain on plainjob (a small SQLite queue for
 * better-sqlite3), a fresh database file in a temp dir with plainjob's own settings (WAL,
 * synchronous=NORMAL: the same durability as kiln-sqlite). One job type per stage and
 * `concurrency` workers per type; each processor adds the next stage's job before returning,
 * as plainjob users chain stages (outside the job's completion: plainjob keeps no stage state).
 * Heads are added one by one (`add`) or in `addMany` chunks (`--submit`). Prints one result line.
 * Usage: node --import tsx bench/engine/plainjob.ts --runs N --concurrency C [--submit single|bulk]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { better, defineQueue, defineWorker, type Queue, type Worker } from 'plainjob';
import { chainResult, createChainProbe, stageCompleted, stageStarted, timeChains, type ChainProbe } from './chain-probe.ts';
import { parseEngineArgs, type EngineArgs } from './engine-args.ts';
import { emitResult, type EngineResult } from './engine-result.ts';
import { STAGE_COUNT } from './kiln-bench.ts';
import { startRssSampler } from './rss-sampler.ts';
import { submitHeads } from './submit-heads.ts';

/** Idle workers poll this often (plainjob's default is 1 s; kiln's bench worker polls every 5 ms). */
const POLL_MS = 5;
const TYPES = Array.from({ length: STAGE_COUNT }, (_, i) => `bench-s${i + 1}`);
const FIRST = TYPES[0] ?? 'bench-s1';

/** plainjob logs every poll at debug level; the bench keeps only its warnings and errors. */
const quietLogger = { error: console.error, warn: console.warn, info: () => {}, debug: () => {} };

function defineWorkers(queue: Queue, concurrency: number, probe: ChainProbe): Worker[] {
  return TYPES.flatMap((type, i) => {
    const next = TYPES[i + 1];
    return Array.from({ length: concurrency }, () =>
      defineWorker(
        type,
        (job) => {
          stageStarted(probe, String(job.id));
          if (next) queue.add(next, job.data);
          return Promise.resolve();
        },
        {
          queue,
          pollIntervall: POLL_MS,
          logger: quietLogger,
          onCompleted: (job) => stageCompleted(probe, String(job.id), !next),
          onFailed: () => probe.failed++,
        },
      ),
    );
  });
}

async function measure(path: string, { runs, concurrency, submit }: EngineArgs): Promise<EngineResult> {
  const rss = startRssSampler(50);
  const queue = defineQueue({ connection: better(new Database(path)), logger: quietLogger });
  const probe = createChainProbe();
  const workers = defineWorkers(queue, concurrency, probe);
  const running = workers.map((w) => w.start());
  try {
    const timing = await timeChains(probe, runs, submit, (mode, count, offset) =>
      submitHeads(mode, count, offset, {
        one: async (n) => queue.add(FIRST, { n }),
        many: async (ns) => queue.addMany(FIRST, ns.map((n) => ({ n }))),
      }),
    );
    if (probe.failed > 0) throw new Error(`${probe.failed} plainjob jobs failed`);
    return {
      ...chainResult('plainjob', { runs, concurrency }, timing, probe),
      peakRssMb: rss.stop(),
      extra: {
        latencyBasis: 'processor start -> onCompleted (same job; includes adding the next job)',
        sqlite: 'plainjob defaults: WAL, synchronous=NORMAL',
        workers: `${concurrency} per stage type, polling every ${POLL_MS} ms when idle`,
        jobRetention: 'plainjob default (done jobs kept 7 days)',
        warmupRuns: timing.warmupRuns,
      },
    };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await Promise.all(running);
    queue.close();
  }
}

const args = parseEngineArgs(process.argv.slice(2));
const dir = mkdtempSync(join(tmpdir(), 'kiln-bench-plainjob-'));
try {
  emitResult(await measure(join(dir, 'queue.db'), args));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
