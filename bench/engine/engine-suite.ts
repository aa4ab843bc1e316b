/**
 * The engine suite: runs each system in its own child process (separate heap, GC and RSS),
 * collects their result lines, prints the comparison table and writes the JSON report.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { EngineArgs } from './engine-args.ts';
import { RESULT_PREFIX, type EngineResult } from './engine-result.ts';
import { findRedisServer } from './redis-server.ts';

/** Every system the suite knows, in run order. */
export const ENGINE_SYSTEMS = ['kiln-memory', 'kiln-sqlite', 'bullmq'] as const;
export type EngineSystem = (typeof ENGINE_SYSTEMS)[number];

/** A system that produced no numbers, and why. */
export interface SkippedSystem {
  system: EngineSystem;
  skipped: string;
}

/** The JSON written to `bench/results/engine-<timestamp>.json`. */
export interface EngineReport {
  suite: 'engine';
  startedAt: string;
  machine: { cpus: number; cpuModel: string; totalMemMb: number; node: string; platform: string };
  runs: number;
  concurrency: number;
  results: (EngineResult | SkippedSystem)[];
  /** runs/s of the kiln system divided by BullMQ's, when both ran. */
  ratios: { kilnSqliteOverBullmq?: number; kilnMemoryOverBullmq?: number };
}

/** A child that hangs (e.g. a lost wake-up) is killed so the suite still reports the others. */
const CHILD_TIMEOUT_MS = 180_000;
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));

function isEngineSystem(name: string): name is EngineSystem {
  return (ENGINE_SYSTEMS as readonly string[]).includes(name);
}

/** Spawns `bench/engine/<system>.ts` and parses its result line; stderr passes through. */
function runChild(system: EngineSystem, args: EngineArgs): Promise<EngineResult> {
  const script = fileURLToPath(new URL(`./${system}.ts`, import.meta.url));
  const argv = ['--import', 'tsx', script, '--runs', String(args.runs), '--concurrency', String(args.concurrency)];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const timer = setTimeout(() => child.kill('SIGTERM'), CHILD_TIMEOUT_MS);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.split('\n').find((l) => l.startsWith(RESULT_PREFIX));
      if (code === 0 && line) return resolve(JSON.parse(line.slice(RESULT_PREFIX.length)) as EngineResult);
      reject(new Error(`${system} exited with ${signal ?? `code ${code}`} and ${line ? 'a' : 'no'} result line`));
    });
  });
}

function selectedSystems(only: readonly string[]): EngineSystem[] {
  const unknown = only.filter((name) => !isEngineSystem(name));
  if (unknown.length > 0) throw new Error(`unknown system(s) ${unknown.join(', ')}; known: ${ENGINE_SYSTEMS.join(', ')}`);
  return only.length === 0 ? [...ENGINE_SYSTEMS] : ENGINE_SYSTEMS.filter((s) => only.includes(s));
}

function isResult(r: EngineResult | SkippedSystem): r is EngineResult {
  return !('skipped' in r);
}

function ratio(results: EngineReport['results'], system: EngineSystem): number | undefined {
  const ok = results.filter(isResult);
  const kiln = ok.find((r) => r.system === system);
  const bull = ok.find((r) => r.system === 'bullmq');
  return kiln && bull ? Math.round((kiln.runsPerSec / bull.runsPerSec) * 100) / 100 : undefined;
}

/** Renders the comparison table, one row per system. */
export function formatTable(report: EngineReport): string {
  const header = ['system', 'runs/s', 'transitions/s', 'p50 ms', 'p99 ms', 'peak RSS MB'];
  const rows = report.results.map((r) =>
    isResult(r)
      ? [r.system, r.runsPerSec.toFixed(1), String(r.transitionsPerSec), r.stageLatency.p50Ms.toFixed(2), r.stageLatency.p99Ms.toFixed(2), r.peakRssMb.toFixed(1)]
      : [r.system, `skipped: ${r.skipped}`, '', '', '', ''],
  );
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

function formatRatios(report: EngineReport): string {
  const { kilnSqliteOverBullmq: sqlite, kilnMemoryOverBullmq: memory } = report.ratios;
  const lines: string[] = [];
  if (sqlite !== undefined) lines.push(`kiln-sqlite / bullmq: ${sqlite.toFixed(2)}x runs/s (target >= 2x: ${sqlite >= 2 ? 'met' : 'NOT met'})`);
  if (memory !== undefined) lines.push(`kiln-memory / bullmq: ${memory.toFixed(2)}x runs/s`);
  return lines.join('\n');
}

/** Runs the selected systems one after another, prints the table, writes and returns the report. */
export async function runEngineSuite(args: EngineArgs): Promise<{ report: EngineReport; path: string }> {
  const systems = selectedSystems(args.only);
  const startedAt = new Date().toISOString();
  const results: EngineReport['results'] = [];
  console.log(`engine: ${args.runs} runs x 5 no-op stages, concurrency ${args.concurrency} per stage, systems: ${systems.join(', ')}`);
  for (const system of systems) {
    if (system === 'bullmq' && !findRedisServer()) {
      console.log('bullmq: skipped (redis-server not found)');
      results.push({ system, skipped: 'redis-server not found' });
      continue;
    }
    try {
      const result = await runChild(system, args);
      console.log(`${system}: ${result.runsPerSec} runs/s in ${result.elapsedMs} ms`);
      results.push(result);
    } catch (err) {
      console.error(`${system}: failed: ${(err as Error).message}`);
      results.push({ system, skipped: `failed: ${(err as Error).message}` });
    }
  }
  const report: EngineReport = {
    suite: 'engine',
    startedAt,
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', totalMemMb: Math.round(totalmem() / 1024 / 1024), node: process.version, platform: process.platform },
    runs: args.runs,
    concurrency: args.concurrency,
    results,
    ratios: { kilnSqliteOverBullmq: ratio(results, 'kiln-sqlite'), kilnMemoryOverBullmq: ratio(results, 'kiln-memory') },
  };
  console.log(`\n${formatTable(report)}\n`);
  const ratios = formatRatios(report);
  if (ratios) console.log(`${ratios}\n`);
  console.log('p50/p99: per stage job, handler start -> commit finished (kiln: commit resolved; bullmq: worker "completed" event).');
  mkdirSync(RESULTS_DIR, { recursive: true });
  // Colons are not portable in file names, so the ISO timestamp uses '-' there.
  const path = `${RESULTS_DIR}engine-${startedAt.replace(/[:.]/g, '-')}.json`;
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`wrote ${path}`);
  return { report, path };
}
