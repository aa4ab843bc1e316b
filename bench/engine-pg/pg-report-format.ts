/**
 * Text rendering of the PostgreSQL suite's report: one table per scenario, the kiln ratios
 * against their targets, and a profiled child's hotspots.
 */
import { formatTextTable } from '../engine/text-table.ts';
import type { CpuProfileSummary } from './cpu-profile.ts';
import { PgScenario, type PgBenchResult, type PgSystem } from './pg-bench-result.ts';

/** kiln's items/s divided by another system's, in one scenario, when both ran. */
export interface ScenarioRatios {
  kilnOverGraphileBatched?: number;
  kilnPrefetchOverGraphileBatched?: number;
  kilnOverGraphileDefault?: number;
  /** Against graphile-worker batched whose tasks write one state row per job (what kiln records). */
  kilnOverGraphileBatchedState?: number;
  /** The same at the same local-queue size (kiln-prefetch holds what graphile's batched preset holds). */
  kilnPrefetchOverGraphileBatchedState?: number;
  kilnOverPgBoss?: number;
}

/** kiln's items/s divided by another system's, per scenario, when both ran. */
export interface PgRatios {
  noop: ScenarioRatios;
  chains: ScenarioRatios;
}

/** Issue 13's targets for kiln / graphile-worker (batched), and / graphile-worker batched with a state row per job. */
export const PG_TARGETS = { noop: 0.5, chains: 3, withState: 1.5 } as const;

type Row = PgBenchResult | { system: PgSystem; scenario: PgScenario; skipped: string };

/** One table: no-op jobs/s, or chains/s with the jobs/s they imply. */
export function formatScenarioTable(scenario: PgScenario, rows: readonly Row[]): string {
  const noop = scenario === PgScenario.Noop;
  const per = noop ? 'job' : 'chain';
  const counts = [`commits/${per}`, `xids/${per}`, 'rows/job', `client CPU ms/${per}`, `server CPU ms/${per}`, 'peak RSS MB'];
  const header = noop
    ? ['no-op jobs', 'jobs/s', 'elapsed ms', ...counts]
    : ['5-stage chains', 'chains/s', 'jobs/s', 'elapsed ms', 'submit ms', ...counts];
  const body = rows.map((r) => {
    if ('skipped' in r) return [r.system, `skipped: ${r.skipped}`];
    const tail = [r.xactsPerItem.toFixed(2), r.xidsPerItem.toFixed(2), r.rowWritesPerJob.toFixed(2), r.clientCpuMsPerItem.toFixed(2),
      r.serverCpuMsPerItem === null ? 'n/a' : r.serverCpuMsPerItem.toFixed(2), r.peakRssMb.toFixed(1)];
    if (noop) return [r.system, r.itemsPerSec.toFixed(0), String(r.elapsedMs), ...tail];
    const submitMs = r.extra['submitMs'];
    return [r.system, r.itemsPerSec.toFixed(1), String(r.jobsPerSec), String(r.elapsedMs), typeof submitMs === 'number' ? String(submitMs) : '', ...tail];
  });
  return formatTextTable(header, body);
}

function ratioLine(label: string, value: number | undefined, target?: number): string | undefined {
  if (value === undefined) return undefined;
  const verdict = target === undefined ? '' : ` (target >= ${target}: ${value >= target ? 'met' : 'NOT met'})`;
  return `${label}: ${value.toFixed(2)}x${verdict}`;
}

/** The ratio lines that could be computed, targets marked met or not. */
export function formatRatios(ratios: PgRatios): string {
  const lines = [
    ratioLine('no-op   kiln / graphile-batched', ratios.noop.kilnOverGraphileBatched, PG_TARGETS.noop),
    ratioLine('chains  kiln / graphile-batched', ratios.chains.kilnOverGraphileBatched, PG_TARGETS.chains),
    ratioLine('no-op   kiln-prefetch / graphile-batched', ratios.noop.kilnPrefetchOverGraphileBatched, PG_TARGETS.noop),
    ratioLine('chains  kiln-prefetch / graphile-batched', ratios.chains.kilnPrefetchOverGraphileBatched, PG_TARGETS.chains),
    ratioLine('no-op   kiln / graphile-batched-state', ratios.noop.kilnOverGraphileBatchedState, PG_TARGETS.withState),
    ratioLine('chains  kiln / graphile-batched-state', ratios.chains.kilnOverGraphileBatchedState, PG_TARGETS.withState),
    ratioLine('no-op   kiln-prefetch / graphile-batched-state', ratios.noop.kilnPrefetchOverGraphileBatchedState, PG_TARGETS.withState),
    ratioLine('chains  kiln-prefetch / graphile-batched-state', ratios.chains.kilnPrefetchOverGraphileBatchedState, PG_TARGETS.withState),
    ratioLine('no-op   kiln / graphile-default', ratios.noop.kilnOverGraphileDefault),
    ratioLine('chains  kiln / graphile-default', ratios.chains.kilnOverGraphileDefault),
    ratioLine('no-op   kiln / pg-boss', ratios.noop.kilnOverPgBoss),
    ratioLine('chains  kiln / pg-boss', ratios.chains.kilnOverPgBoss),
  ];
  return lines.filter((l): l is string => l !== undefined).join('\n');
}

/** Top functions by self time, then the areas they belong to. */
export function formatHotspots(label: string, profileValue: unknown): string {
  const profile = profileValue as CpuProfileSummary;
  const functions = formatTextTable(
    ['self %', 'self ms', 'function', 'location'],
    profile.hotspots.map((h) => [h.selfPct.toFixed(1), String(h.selfMs), h.functionName, h.location]),
    ['right', 'right', 'left', 'left'],
  );
  const areas = profile.byArea.map((a) => `${a.name} ${a.selfPct.toFixed(1)}%`).join(', ');
  return `CPU profile, ${label} (measured phase, ${profile.totalMs} ms sampled; raw: ${profile.profilePath})\n${functions}\nby area: ${areas}`;
}
