/**
 * What each PostgreSQL benchmark child measures and prints, and the measured-phase wrapper
 * every child uses so timing, CPU, RSS and transaction counting are done the same way for kiln,
 * graphile-worker and pg-boss.
 */
import { startRssSampler } from '../engine/rss-sampler.ts';
import { postmasterPidOf, serverCpuSeconds } from './server-cpu.ts';
import { measureReadingOverhead, readTxCounters, txDelta, type RowWrites } from './pg-tx-counter.ts';

/** The two workloads. */
export const PgScenario = {
  /** Pre-filled no-op jobs on one queue, timed from the first handler start until all are done. */
  Noop: 'noop',
  /** 5-stage chains (each job enqueues the next stage), timed from the first submission. */
  Chains: 'chains',
} as const;
export type PgScenario = (typeof PgScenario)[keyof typeof PgScenario];

/** Every system the suite knows, in run order. */
export const PG_SYSTEMS = ['kiln', 'kiln-prefetch', 'graphile-default', 'graphile-batched', 'graphile-batched-state', 'pg-boss'] as const;
export type PgSystem = (typeof PG_SYSTEMS)[number];

/** Stages per chain in the chains scenario. */
export const CHAIN_STAGE_COUNT = 5;

/** Throughput of one scenario's measured phase, the same for every server benchmark. */
export interface ScenarioThroughput {
  /** No-op jobs or chains measured. */
  count: number;
  /** Jobs in flight per queue (per stage). */
  concurrency: number;
  /** Jobs per counted item: 1 for no-op jobs, 5 for chains. */
  jobsPerItem: number;
  elapsedMs: number;
  /** No-op jobs/s or chains/s. */
  itemsPerSec: number;
  jobsPerSec: number;
}

/** Jobs one item of `scenario` runs: a chain's stages, or one no-op job. */
const jobsPerItemOf = (scenario: PgScenario): number => (scenario === PgScenario.Chains ? CHAIN_STAGE_COUNT : 1);

/** The throughput of `count` items of `scenario` done in `elapsedMs`. */
export function throughputOf(scenario: PgScenario, count: number, concurrency: number, elapsedMs: number): ScenarioThroughput {
  const jobsPerItem = jobsPerItemOf(scenario);
  return {
    count,
    concurrency,
    jobsPerItem,
    elapsedMs: Math.round(elapsedMs),
    itemsPerSec: round1((count / elapsedMs) * 1000),
    jobsPerSec: Math.round(((count * jobsPerItem) / elapsedMs) * 1000),
  };
}

/** One child's measurement. */
export interface PgBenchResult extends ScenarioThroughput {
  system: PgSystem;
  scenario: PgScenario;
  /** `pg_stat_database.xact_commit` over the phase, minus the measurement's own commits. */
  xactCommits: number;
  xactsPerItem: number;
  /** Transaction ids assigned over the phase (write transactions and subtransactions). */
  writeXids: number;
  xidsPerItem: number;
  /**
   * Rows inserted + updated + deleted over the phase (`pg_stat_user_tables`), per job (a chain
   * counts its stages' jobs), with the per-table counts of the whole phase.
   */
  rowWritesPerJob: number;
  rowWritesByTable: Record<string, RowWrites>;
  /**
   * CPU (user + sys) per item, ms, over the phase: this Node process's, and the server's
   * (postmaster and backends, server-cpu.ts; null when the server is not on this machine). On a
   * shared machine they move far less than items/s, and their sum is what an item costs.
   */
  clientCpuMsPerItem: number;
  serverCpuMsPerItem: number | null;
  /** Peak RSS of the child's Node process, sampled every 50 ms. */
  peakRssMb: number;
  /** System-specific settings and side measurements. */
  extra: Record<string, unknown>;
}

/** What a phase's `run` reports back. */
export interface PhaseTiming {
  elapsedMs: number;
  /** Queries the phase issued only to detect completion; subtracted from the commit count. */
  monitorQueries: number;
  extra?: Record<string, unknown>;
}

/** Inputs of {@link measurePhase}. */
export interface PhaseSpec {
  connectionString: string;
  system: PgSystem;
  scenario: PgScenario;
  count: number;
  concurrency: number;
  /**
   * Runs the measured work and returns its timing. It must close every connection it opened
   * before resolving: only closed connections have flushed their transaction counts.
   */
  run(): Promise<PhaseTiming>;
}

const round1 = (v: number): number => Math.round(v * 10) / 10;
const round2 = (v: number): number => Math.round(v * 100) / 100;

/** Reads the counters around `spec.run()` (waiting for other connections to close) and builds the result. */
export async function measurePhase(spec: PhaseSpec): Promise<PgBenchResult> {
  const readingOverhead = await measureReadingOverhead(spec.connectionString);
  const postmasterPid = await postmasterPidOf(spec.connectionString);
  const before = await readTxCounters(spec.connectionString);
  const rss = startRssSampler(50);
  const server0 = postmasterPid === undefined ? 0 : serverCpuSeconds(postmasterPid);
  const client0 = process.cpuUsage();
  const timing = await spec.run();
  const client = process.cpuUsage(client0);
  const serverCpuS = postmasterPid === undefined ? undefined : serverCpuSeconds(postmasterPid) - server0;
  const peakRssMb = rss.stop();
  const after = await readTxCounters(spec.connectionString);
  const delta = txDelta(before, after);
  const xactCommits = delta.xactCommits - readingOverhead - timing.monitorQueries;
  return {
    system: spec.system,
    scenario: spec.scenario,
    ...throughputOf(spec.scenario, spec.count, spec.concurrency, timing.elapsedMs),
    xactCommits,
    xactsPerItem: round2(xactCommits / spec.count),
    writeXids: delta.writeXids,
    xidsPerItem: round2(delta.writeXids / spec.count),
    rowWritesPerJob: round2((delta.rowWrites.inserted + delta.rowWrites.updated + delta.rowWrites.deleted) / (spec.count * jobsPerItemOf(spec.scenario))),
    rowWritesByTable: delta.rowWritesByTable,
    clientCpuMsPerItem: round2((client.user + client.system) / 1000 / spec.count),
    serverCpuMsPerItem: serverCpuS === undefined ? null : round2((serverCpuS * 1000) / spec.count),
    peakRssMb,
    extra: { ...timing.extra, readingOverheadXacts: readingOverhead, monitorQueries: timing.monitorQueries },
  };
}
