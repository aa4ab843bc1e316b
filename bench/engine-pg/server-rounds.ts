/**
 * Rounds of the two server suites (PostgreSQL and Redis): with `--repeat N` every system and
 * scenario runs N times, alternating, and each system is reported by its median round (on a
 * shared machine one round is noise); the other rounds stay in the JSON report and are listed.
 */
import { lowerMedianBy } from '../engine/median.ts';
import type { PgScenario } from './pg-bench-result.ts';

/** A system that produced no numbers for a scenario, and why. */
export interface SkippedRound<S extends string> {
  system: S;
  scenario: PgScenario;
  skipped: string;
}

/** What a round's row needs to be ranked: its system, scenario and items/s. */
export interface RoundResult<S extends string> {
  system: S;
  scenario: PgScenario;
  itemsPerSec: number;
}

type Row<S extends string, R extends RoundResult<S>> = R | SkippedRound<S>;

function isResult<S extends string, R extends RoundResult<S>>(r: Row<S, R>): r is R {
  return !('skipped' in r);
}

/** The round with the median items/s of `system` in `scenario` (the lower middle for an even count). */
export function medianRound<S extends string, R extends RoundResult<S>>(results: readonly Row<S, R>[], scenario: PgScenario, system: S): R | undefined {
  return lowerMedianBy(
    results.filter(isResult).filter((r) => r.scenario === scenario && r.system === system),
    (r) => r.itemsPerSec,
  );
}

/** The median round's items/s of `system` over `other`'s in `scenario`, when both ran. */
export function medianRatio<S extends string, R extends RoundResult<S>>(results: readonly Row<S, R>[], scenario: PgScenario, system: S, other: S): number | undefined {
  const mine = medianRound(results, scenario, system);
  const theirs = medianRound(results, scenario, other);
  return mine && theirs ? Math.round((mine.itemsPerSec / theirs.itemsPerSec) * 100) / 100 : undefined;
}

/** The rows of a scenario's table: each system's median round, or why it has none. */
export function medianRows<S extends string, R extends RoundResult<S>>(results: readonly Row<S, R>[], scenario: PgScenario): Row<S, R>[] {
  const systems = [...new Set(results.filter((r) => r.scenario === scenario).map((r) => r.system))];
  return systems.map((system) => medianRound(results, scenario, system) ?? results.find((r) => r.scenario === scenario && r.system === system)!);
}

/** Every round's items/s per system, to show the spread the median hides ('' for one round). */
export function formatRounds<S extends string, R extends RoundResult<S>>(results: readonly Row<S, R>[], scenarios: readonly PgScenario[], repeat: number): string {
  if (repeat === 1) return '';
  const lines: string[] = [];
  for (const scenario of scenarios) {
    for (const system of new Set(results.filter((r) => r.scenario === scenario).map((r) => r.system))) {
      const runs = results.filter(isResult).filter((r) => r.scenario === scenario && r.system === system);
      lines.push(`${scenario} ${system}: ${runs.map((r) => r.itemsPerSec.toFixed(0)).join(', ')}`);
    }
  }
  return `every round (items/s):\n${lines.join('\n')}`;
}
