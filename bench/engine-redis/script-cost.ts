/**
 * `npm run bench -- redis-scripts`: where the Redis store's server time goes on the job path,
 * phase by phase, with no worker and no competitor: `--runs` 5-stage runs are submitted (bulk,
 * 500 a call), then each stage's jobs are claimed `--batch` at a time and completed in one commit
 * per claim (the next stage enqueued by it), on a private redis-server. After each call the
 * server's CPU (`INFO cpu`) and `INFO commandstats` say what the call cost: CPU, time in scripts and
 * the commands they issued; the phases' sums are printed per job (submit: per run). No concurrency
 * and no network wait: the CPU figures are the scripts' own cost, far less sensitive to a loaded
 * machine than a throughput (the script times are wall time, stretched when the server is
 * preempted), so two layouts can be compared on them.
 */
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import type { ClaimedJob, CommitItem, JobSpec, SubmitRunRequest } from '../../src/core/ports/jobs.ts';
import { createRedisStore } from '../../src/stores/redis/index.ts';
import { parseInfo } from '../../src/stores/redis/server-settings.ts';
import { startRedis } from '../../test/support/redis-server.ts';
import { positiveInt } from '../engine/engine-args.ts';

const STAGES = ['s1', 's2', 's3', 's4', 's5'] as const;
const SUBMIT_CHUNK = 500;

/** Flags of the suite. */
export interface ScriptCostArgs {
  /** 5-stage runs. @default 2000 */
  runs: number;
  /** Jobs per claim (and so per commit). @default 25 */
  batch: number;
}

/** Parses `[--runs N] [--batch N]`. */
export function parseScriptCostArgs(argv: readonly string[]): ScriptCostArgs {
  const { values } = parseArgs({ args: [...argv], options: { runs: { type: 'string' }, batch: { type: 'string' } } });
  return { runs: positiveInt('runs', values.runs, 2000), batch: positiveInt('batch', values.batch, 25) };
}

/** One phase's sums. */
interface PhaseCost {
  items: number;
  /** redis-server's CPU (user + sys) over the phase's calls, µs. */
  cpuUsec: number;
  scriptUsec: number;
  scripts: number;
  commands: number;
}

function stageJob(stage: string): JobSpec {
  return { stage, queue: `bench.${stage}`, kind: 'stage', maxAttempts: 3, priority: 0 };
}

/** redis-server's CPU so far (user + sys), µs. */
async function serverCpuUsec(admin: Redis): Promise<number> {
  const cpu = parseInfo(await admin.info('cpu'));
  return (Number(cpu.get('used_cpu_user') ?? 0) + Number(cpu.get('used_cpu_sys') ?? 0)) * 1e6;
}

/** Script time, script calls and other commands since the last reset, from `INFO commandstats`. */
async function serverCounts(admin: Redis): Promise<Omit<PhaseCost, 'items' | 'cpuUsec'>> {
  const counts = { scriptUsec: 0, scripts: 0, commands: 0 };
  for (const [key, value] of parseInfo(await admin.info('commandstats'))) {
    const stat = /calls=(\d+),usec=(\d+)/.exec(value);
    if (!key.startsWith('cmdstat_') || stat === null) continue;
    const name = key.slice('cmdstat_'.length);
    if (name === 'info' || name.startsWith('config')) continue;
    if (name === 'evalsha' || name === 'eval') {
      counts.scriptUsec += Number(stat[2]);
      counts.scripts += Number(stat[1]);
    } else {
      counts.commands += Number(stat[1]);
    }
  }
  return counts;
}

/** Runs the phases; prints and returns their costs per item. */
export async function runScriptCost(args: ScriptCostArgs): Promise<Record<string, PhaseCost>> {
  const server = await startRedis({ serverArgs: ['--appendonly', 'no'] });
  const admin = new Redis(server.url, { maxRetriesPerRequest: 2 });
  const store = createRedisStore({ url: server.url, name: 'script-cost' });
  const phases: Record<string, PhaseCost> = {};
  const measure = async <T>(phase: string, work: () => Promise<T>, items: (result: T) => number): Promise<T> => {
    await admin.config('RESETSTAT');
    const cpuBefore = await serverCpuUsec(admin);
    const result = await work();
    const cpu = (await serverCpuUsec(admin)) - cpuBefore;
    const counts = await serverCounts(admin);
    const sum = (phases[phase] ??= { items: 0, cpuUsec: 0, scriptUsec: 0, scripts: 0, commands: 0 });
    sum.items += items(result);
    sum.cpuUsec += cpu;
    sum.scriptUsec += counts.scriptUsec;
    sum.scripts += counts.scripts;
    sum.commands += counts.commands;
    return result;
  };
  try {
    await store.migrate();
    for (let start = 0; start < args.runs; start += SUBMIT_CHUNK) {
      const requests: SubmitRunRequest[] = Array.from({ length: Math.min(SUBMIT_CHUNK, args.runs - start) }, (_, i) => ({
        pipeline: 'bench', pipelineVersion: 1, input: { n: start + i }, inputChecksum: `input-${start + i}`, stages: [...STAGES], firstJob: stageJob(STAGES[0]),
      }));
      await measure('submit', () => store.jobs.submit(requests), (results) => results.length);
    }
    for (const [index, stage] of STAGES.entries()) {
      const next = STAGES[index + 1];
      for (;;) {
        const claimed = await measure('claim', () => store.jobs.claim([{ queue: `bench.${stage}`, workerId: 'w', limit: args.batch, leaseMs: 600_000 }]), (jobs) => jobs.length);
        if (claimed.length === 0) break;
        const items = claimed.map((c: ClaimedJob): CommitItem => ({
          type: 'complete', lease: { jobId: c.job.id, token: c.job.leaseToken ?? '' }, output: { stage }, durationMs: 1, next: next === undefined ? null : stageJob(next),
        }));
        await measure(next === undefined ? 'commit (last)' : 'commit', () => store.jobs.commit(items), (results) => results.length);
      }
    }
  } finally {
    await store.close();
    admin.disconnect();
    await server.stop();
  }
  console.log(`redis-scripts: ${args.runs} runs of ${STAGES.length} stages, ${args.batch} jobs per claim and commit, private redis-server (AOF off)`);
  console.log('phase          items  server CPU µs/item  script µs/item  scripts/item  cmds in scripts/item');
  let chainCpu = 0;
  let chainScript = 0;
  for (const [phase, p] of Object.entries(phases)) {
    chainCpu += p.cpuUsec;
    chainScript += p.scriptUsec;
    const per = (total: number, digits: number, width: number): string => (total / p.items).toFixed(digits).padStart(width);
    console.log(`${phase.padEnd(13)} ${String(p.items).padStart(6)}  ${per(p.cpuUsec, 1, 18)}  ${per(p.scriptUsec, 1, 14)}  ${per(p.scripts, 3, 12)}  ${per(p.commands, 1, 20)}`);
  }
  console.log(`per 5-stage run: ${(chainCpu / args.runs).toFixed(0)} µs of server CPU, ${(chainScript / args.runs).toFixed(0)} µs of script time`);
  console.log('server CPU includes the INFO calls around each phase call; script time is wall time inside scripts (a loaded machine inflates it).');
  return phases;
}
