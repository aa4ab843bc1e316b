/**
 * The one JSON line each system's child process prints, and the percentile math behind it.
 */

/** p50/p99 of a latency sample, in milliseconds. */
export interface LatencySummary {
  p50Ms: number;
  p99Ms: number;
  /** Number of samples. */
  count: number;
}

/** What one system measured. */
export interface EngineResult {
  system: string;
  runs: number;
  concurrency: number;
  stagesPerRun: number;
  /** From the first submission until the last run succeeded. */
  elapsedMs: number;
  /** Time spent in the submission loop (workers were already running). */
  submitMs: number;
  runsPerSec: number;
  transitionsPerSec: number;
  /** Handler start to the end of that job's commit, per stage job. */
  stageLatency: LatencySummary;
  /** Peak RSS of this Node process, sampled every 50 ms. */
  peakRssMb: number;
  /**
   * CPU (user + system) per stage transition over the timed phase: the benchmark's process,
   * plus redis-server's for BullMQ (process-cpu.ts).
   */
  cpuUsPerTransition: number;
  /** Extra per-system measurements (commit/claim call times, store RSS, ...). */
  extra: Record<string, unknown>;
}

/** The value at quantile `q` (0..1) of an ascending array, nearest-rank; 0 for an empty array. */
export function quantile(sortedAsc: readonly number[], q: number): number {
  if (sortedAsc.length === 0) return 0;
  const rank = Math.min(sortedAsc.length - 1, Math.max(0, Math.ceil(q * sortedAsc.length) - 1));
  return sortedAsc[rank] ?? 0;
}

/** Summarises samples in ms, rounded to 0.01 ms. */
export function summarize(samplesMs: readonly number[]): LatencySummary {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const round = (v: number): number => Math.round(v * 100) / 100;
  return { p50Ms: round(quantile(sorted, 0.5)), p99Ms: round(quantile(sorted, 0.99)), count: sorted.length };
}

/** Marks the result line so the suite finds it even if a library logs to stdout. */
export const RESULT_PREFIX = 'BENCH_RESULT ';

/** Prints any JSON-serialisable result as the child's single result line. */
export function emitResultLine(result: object): void {
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`);
}

/** Prints the result as the child's single result line. */
export function emitResult(result: EngineResult): void {
  emitResultLine(result);
}

/** Finds the result line in a child's stdout and parses it; undefined when there is none. */
export function parseResultLine(stdout: string): unknown {
  const line = stdout.split('\n').find((l) => l.startsWith(RESULT_PREFIX));
  return line === undefined ? undefined : (JSON.parse(line.slice(RESULT_PREFIX.length)) as unknown);
}
