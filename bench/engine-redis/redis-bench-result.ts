/**
 * What each Redis benchmark child measures and prints, and the measured-phase wrapper both
 * children (kiln-redis, BullMQ) use, so timing, CPU and command counting are done the same way:
 * wall time, commands the Node process sent (each one request and its reply), what the server
 * ran (`INFO commandstats`: script calls, their time, the commands inside them) and the CPU both
 * processes used over the phase.
 */
import { Redis } from 'ioredis';
import { throughputOf, type PgScenario, type PhaseTiming, type ScenarioThroughput } from '../engine-pg/pg-bench-result.ts';
import { parseInfo } from '../../src/stores/redis/server-settings.ts';
import { startRssSampler } from '../engine/rss-sampler.ts';
import { startCommandCount } from './command-counter.ts';

/** Every system the suite knows, in run order. */
export const REDIS_SYSTEMS = ['kiln-redis', 'kiln-redis-prefetch', 'bullmq'] as const;
export type RedisSystem = (typeof REDIS_SYSTEMS)[number];

/** One command's share of the phase. */
export interface CommandShare {
  name: string;
  calls: number;
  /** Server time (µs) in it; a script's includes the commands it ran. */
  usec: number;
}

/** One child's measurement. */
export interface RedisBenchResult extends ScenarioThroughput {
  system: RedisSystem;
  scenario: PgScenario;
  /** Commands this process sent per item (requests, each with its reply; pipelined ones too). */
  clientCommandsPerItem: number;
  /** Script calls (EVALSHA, EVAL, FCALL) the server ran per item. */
  scriptCallsPerItem: number;
  /** Server time in scripts per item, µs (from commandstats). */
  scriptUsecPerItem: number;
  /** Commands the server ran per item, those inside scripts included. */
  serverCommandsPerItem: number;
  /** redis-server CPU (user + sys) per item, ms. */
  serverCpuMsPerItem: number;
  /** This Node process's CPU (user + sys) per item, ms. */
  clientCpuMsPerItem: number;
  /** Share of the phase's wall time the server's CPU was busy (1 = one core saturated). */
  serverBusy: number;
  clientBusy: number;
  peakRssMb: number;
  /** The commands this process sent, most first; the server's top commands by time. */
  extra: Record<string, unknown>;
}

/** Inputs of {@link measureRedisPhase}. */
export interface RedisPhaseSpec {
  url: string;
  system: RedisSystem;
  scenario: PgScenario;
  count: number;
  concurrency: number;
  /** Runs the measured work and returns its timing. */
  run(): Promise<PhaseTiming>;
}

/** `INFO <section>` as key -> value. */
async function info(admin: Redis, section: string): Promise<Map<string, string>> {
  return parseInfo(await admin.info(section));
}

function serverCpuMs(cpu: Map<string, string>): number {
  return (Number(cpu.get('used_cpu_user') ?? 0) + Number(cpu.get('used_cpu_sys') ?? 0)) * 1000;
}

/** `cmdstat_<name>:calls=..,usec=..,...` lines as shares, most time first. */
function commandShares(stats: Map<string, string>): CommandShare[] {
  const shares: CommandShare[] = [];
  for (const [key, value] of stats) {
    if (!key.startsWith('cmdstat_')) continue;
    const field = (name: string): number => Number(new RegExp(`(?:^|,)${name}=(\\d+)`).exec(value)?.[1] ?? 0);
    shares.push({ name: key.slice('cmdstat_'.length), calls: field('calls'), usec: field('usec') });
  }
  return shares.sort((a, b) => b.usec - a.usec);
}

const SCRIPT_COMMANDS = new Set(['evalsha', 'eval', 'fcall', 'evalsha_ro', 'eval_ro', 'fcall_ro']);
/** The commands the admin connection itself ran around the phase, left out of the counts. */
const OWN_COMMANDS = new Set(['info', 'config|resetstat']);

const round2 = (v: number): number => Math.round(v * 100) / 100;

/** Resets the server's command stats, runs the phase, and builds the result from the deltas. */
export async function measureRedisPhase(spec: RedisPhaseSpec): Promise<RedisBenchResult> {
  const admin = new Redis(spec.url, { maxRetriesPerRequest: 2 });
  try {
    await admin.config('RESETSTAT');
    const cpuBefore = serverCpuMs(await info(admin, 'cpu'));
    const clientBefore = process.cpuUsage();
    const rss = startRssSampler(50);
    const commands = startCommandCount();
    const timing = await spec.run();
    const sent = commands.stop();
    const peakRssMb = rss.stop();
    const client = process.cpuUsage(clientBefore);
    const cpuAfter = serverCpuMs(await info(admin, 'cpu'));
    const shares = commandShares(await info(admin, 'commandstats')).filter((s) => !OWN_COMMANDS.has(s.name));
    const scripts = shares.filter((s) => SCRIPT_COMMANDS.has(s.name));
    const per = (total: number): number => round2(total / spec.count);
    const clientCpuMs = (client.user + client.system) / 1000;
    return {
      system: spec.system,
      scenario: spec.scenario,
      ...throughputOf(spec.scenario, spec.count, spec.concurrency, timing.elapsedMs),
      clientCommandsPerItem: per(Object.values(sent).reduce((a, b) => a + b, 0)),
      scriptCallsPerItem: per(scripts.reduce((a, s) => a + s.calls, 0)),
      scriptUsecPerItem: per(scripts.reduce((a, s) => a + s.usec, 0)),
      serverCommandsPerItem: per(shares.reduce((a, s) => a + s.calls, 0)),
      serverCpuMsPerItem: round2((cpuAfter - cpuBefore) / spec.count),
      clientCpuMsPerItem: round2(clientCpuMs / spec.count),
      serverBusy: round2((cpuAfter - cpuBefore) / timing.elapsedMs),
      clientBusy: round2(clientCpuMs / timing.elapsedMs),
      peakRssMb,
      extra: {
        ...timing.extra,
        clientCommands: Object.fromEntries(Object.entries(sent).sort((a, b) => b[1] - a[1])),
        serverTopCommands: shares.slice(0, 8),
      },
    };
  } finally {
    admin.disconnect();
  }
}
