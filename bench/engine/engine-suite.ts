/**
 * The engine suite: runs each system in its own child process (separate heap, GC and RSS),
 * collects their result lines, prints the comparison table and writes the JSON report.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { EngineArgs } from './engine-args.ts';
import type { EngineResult } from './engine-result.ts';
import type { SubmitMode } from './submit-heads.ts';
import { describeMachine, type MachineInfo } from './machine-info.ts';
import { hasRedisServer } from '../../test/support/redis-server.ts';
import { runResultChild } from './result-child.ts';
import { lowerMedianBy } from './median.ts';
import { formatTextTable } from './text-table.ts';
import type { StatementReport } from './sqlite-statement-timer.ts';

/** Every system the suite knows, in run order. */
export const ENGINE_SYSTEMS = ['kiln-memory', 'kiln-sqlite', 'bullmq', 'plainjob'] as const;
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
  machine: MachineInfo;
  runs: number;
  concurrency: number;
  /** How every system submitted the measured runs. */
  submit: SubmitMode;
  /** Rounds run (each system once per round, in turn); `results` holds each system's median round. */
  repeat: number;
  /** runs/s of every round, by system (several only when `repeat` > 1). */
  rounds: Partial<Record<EngineSystem, number[]>>;
  results: (EngineResult | SkippedSystem)[];
  /** runs/s of the kiln system divided by the peer's, when both ran. */
  ratios: { kilnSqliteOverBullmq?: number; kilnMemoryOverBullmq?: number; kilnSqliteOverPlainjob?: number };
}

/** A child that hangs (e.g. a lost wake-up) is killed so the suite still reports the others. */
const CHILD_TIMEOUT_MS = 180_000;
const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));

function isEngineSystem(name: string): name is EngineSystem {
  return (ENGINE_SYSTEMS as readonly string[]).includes(name);
}

/** Spawns `bench/engine/<system>.ts` and parses its result line; stderr passes through. */
async function runChild(system: EngineSystem, args: EngineArgs): Promise<EngineResult> {
  const script = fileURLToPath(new URL(`./${system}.ts`, import.meta.url));
  const result = await runResultChild({
    script,
    args: [
      ...['--runs', String(args.runs), '--concurrency', String(args.concurrency), '--submit', args.submit],
      ...(args.sqlStatements && system === 'kiln-sqlite' ? ['--sql-statements'] : []),
      ...(args.serveObservability && system.startsWith('kiln-') ? ['--serve-observability'] : []),
    ],
    timeoutMs: CHILD_TIMEOUT_MS,
    label: system,
  });
  return result as EngineResult;
}

function selectedSystems(only: readonly string[]): EngineSystem[] {
  const unknown = only.filter((name) => !isEngineSystem(name));
  if (unknown.length > 0) throw new Error(`unknown system(s) ${unknown.join(', ')}; known: ${ENGINE_SYSTEMS.join(', ')}`);
  return only.length === 0 ? [...ENGINE_SYSTEMS] : ENGINE_SYSTEMS.filter((s) => only.includes(s));
}

function isResult(r: EngineResult | SkippedSystem): r is EngineResult {
  return !('skipped' in r);
}

function ratio(results: EngineReport['results'], system: EngineSystem, peer: EngineSystem): number | undefined {
  const ok = results.filter(isResult);
  const kiln = ok.find((r) => r.system === system);
  const other = ok.find((r) => r.system === peer);
  return kiln && other ? Math.round((kiln.runsPerSec / other.runsPerSec) * 100) / 100 : undefined;
}

/** Renders the comparison table, one row per system. */
export function formatTable(report: EngineReport): string {
  const header = ['system', 'runs/s', 'transitions/s', 'CPU µs/transition', 'p50 ms', 'p99 ms', 'peak RSS MB'];
  const rows = report.results.map((r) =>
    isResult(r)
      ? [r.system, r.runsPerSec.toFixed(1), String(r.transitionsPerSec), r.cpuUsPerTransition.toFixed(1), r.stageLatency.p50Ms.toFixed(2), r.stageLatency.p99Ms.toFixed(2), r.peakRssMb.toFixed(1)]
      : [r.system, `skipped: ${r.skipped}`],
  );
  return formatTextTable(header, rows);
}

/** Each ratio with the target issue 13 sets for it. */
const TARGETS: readonly { key: keyof EngineReport['ratios']; label: string; target: number }[] = [
  { key: 'kilnSqliteOverBullmq', label: 'kiln-sqlite / bullmq', target: 2.5 },
  { key: 'kilnSqliteOverPlainjob', label: 'kiln-sqlite / plainjob', target: 1.5 },
  { key: 'kilnMemoryOverBullmq', label: 'kiln-memory / bullmq', target: 5 },
];

function formatRatios(report: EngineReport): string {
  const lines: string[] = [];
  for (const { key, label, target } of TARGETS) {
    const value = report.ratios[key];
    if (value !== undefined) lines.push(`${label}: ${value.toFixed(2)}x runs/s (target >= ${target}x: ${value >= target ? 'met' : 'NOT met'})`);
  }
  return lines.join('\n');
}

/** kiln-sqlite's statement times (`--sql-statements`) of its reported round, or '' without them. */
function formatStatements(results: EngineReport['results']): string {
  const sqlite = results.filter(isResult).find((r) => r.system === 'kiln-sqlite');
  const timed = sqlite?.extra['sqlStatements'] as StatementReport | undefined;
  if (!timed) return '';
  const rows = timed.top.map((t) => [t.sql, String(t.calls), t.usPerTransition.toFixed(1)]);
  return `kiln-sqlite statements, measured phase: ${timed.usPerTransition.toFixed(1)} µs per stage transition in all\n${formatTextTable(['statement', 'calls', 'µs/transition'], rows)}`;
}

/** The result of the median round by runs/s (the lower middle one of an even count). */
function medianRound(rounds: readonly EngineResult[]): EngineResult | undefined {
  return lowerMedianBy(rounds, (round) => round.runsPerSec);
}

/**
 * Runs the selected systems one after another, `repeat` rounds (so a burst of load on this shared
 * machine hits one round of one system, not the comparison), prints the table of median rounds,
 * writes and returns the report.
 */
export async function runEngineSuite(args: EngineArgs): Promise<{ report: EngineReport; path: string }> {
  const systems = selectedSystems(args.only);
  const startedAt = new Date().toISOString();
  console.log(`engine: ${args.runs} runs x 5 no-op stages, concurrency ${args.concurrency} per stage, systems: ${systems.join(', ')}`);
  console.log(`submit: ${args.submit}${args.repeat > 1 ? `, ${args.repeat} rounds (table and ratios: each system's median round)` : ''}`);
  if (args.serveObservability) console.log('kiln: with pino at info and the Prometheus metrics, as kiln serve runs it');
  const done = new Map<EngineSystem, EngineResult[]>(systems.map((s) => [s, []]));
  const skipped = new Map<EngineSystem, string>();
  if (systems.includes('bullmq') && !hasRedisServer()) {
    console.log('bullmq: skipped (redis-server not found)');
    skipped.set('bullmq', 'redis-server not found');
  }
  for (let round = 1; round <= args.repeat; round++) {
    if (args.repeat > 1) console.log(`round ${round} of ${args.repeat}`);
    for (const system of systems) {
      if (skipped.has(system)) continue;
      try {
        const result = await runChild(system, args);
        console.log(`${system}: ${result.runsPerSec} runs/s in ${result.elapsedMs} ms`);
        done.get(system)?.push(result);
      } catch (err) {
        console.error(`${system}: failed: ${(err as Error).message}`);
        skipped.set(system, `failed: ${(err as Error).message}`);
      }
    }
  }
  const results: EngineReport['results'] = systems.map((system) => {
    const why = skipped.get(system);
    const median = medianRound(done.get(system) ?? []);
    return why !== undefined || median === undefined ? { system, skipped: why ?? 'no round ran' } : median;
  });
  const rounds = Object.fromEntries(systems.map((s) => [s, (done.get(s) ?? []).map((r) => r.runsPerSec)]));
  const report: EngineReport = {
    suite: 'engine',
    startedAt,
    machine: describeMachine(),
    runs: args.runs,
    concurrency: args.concurrency,
    submit: args.submit,
    repeat: args.repeat,
    rounds,
    results,
    ratios: {
      kilnSqliteOverBullmq: ratio(results, 'kiln-sqlite', 'bullmq'),
      kilnMemoryOverBullmq: ratio(results, 'kiln-memory', 'bullmq'),
      kilnSqliteOverPlainjob: ratio(results, 'kiln-sqlite', 'plainjob'),
    },
  };
  console.log(`\n${formatTable(report)}\n`);
  if (args.repeat > 1) {
    for (const [system, values] of Object.entries(rounds)) console.log(`${system} rounds: ${values.map((v) => v.toFixed(0)).join(', ')} runs/s`);
    console.log('');
  }
  const statements = formatStatements(results);
  if (statements) console.log(`${statements}\n`);
  const ratios = formatRatios(report);
  if (ratios) console.log(`${ratios}\n`);
  console.log('p50/p99: per stage job, handler start -> commit finished (kiln: commit resolved; bullmq: worker "completed" event; plainjob: onCompleted).');
  console.log('CPU µs/transition: user + system CPU over the timed phase per stage transition, of the system\'s process (BullMQ: plus redis-server).');
  mkdirSync(RESULTS_DIR, { recursive: true });
  // Colons are not portable in file names, so the ISO timestamp uses '-' there.
  const path = `${RESULTS_DIR}engine-${startedAt.replace(/[:.]/g, '-')}.json`;
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`wrote ${path}`);
  return { report, path };
}
