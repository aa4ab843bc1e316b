/**
 * Arguments of one PostgreSQL benchmark child, and the names it derives from them. The server
 * URL comes from `KILN_PG_URL` (the suite sets it), not argv, so it never shows in `ps`.
 */
import { parseArgs } from 'node:util';
import { positiveInt } from '../engine/engine-args.ts';
import { parseSubmitMode, type SubmitMode } from '../engine/submit-heads.ts';
import { PG_SYSTEMS, PgScenario, type PgSystem } from './pg-bench-result.ts';

/** What one child measures. */
export interface PgChildArgs {
  system: PgSystem;
  scenario: PgScenario;
  /** No-op jobs or chains. */
  count: number;
  concurrency: number;
  /** How the chains scenario's heads (and their warm-up) are submitted. */
  submit: SubmitMode;
  connectionString: string;
}

function isPgSystem(name: string | undefined): name is PgSystem {
  return (PG_SYSTEMS as readonly (string | undefined)[]).includes(name);
}

/** Parses `--system S --scenario noop|chains --count N --concurrency C [--submit single|bulk]`; reads the URL from `KILN_PG_URL`. */
export function parsePgChildArgs(argv: readonly string[]): PgChildArgs {
  const { values } = parseArgs({
    args: [...argv],
    options: { system: { type: 'string' }, scenario: { type: 'string' }, count: { type: 'string' }, concurrency: { type: 'string' }, submit: { type: 'string' } },
  });
  const { system, scenario } = values;
  if (!isPgSystem(system)) throw new Error(`--system must be one of ${PG_SYSTEMS.join(', ')}, got "${system}"`);
  if (scenario !== PgScenario.Noop && scenario !== PgScenario.Chains) throw new Error(`--scenario must be noop or chains, got "${scenario}"`);
  const connectionString = process.env['KILN_PG_URL'];
  if (!connectionString) throw new Error('KILN_PG_URL is not set');
  if (values.count === undefined) throw new Error('--count is required');
  return {
    system,
    scenario,
    count: positiveInt('count', values.count, 1),
    concurrency: positiveInt('concurrency', values.concurrency, 10),
    submit: parseSubmitMode(values.submit),
    connectionString,
  };
}

/** A fresh schema name per child (system, scenario, pid), safe to splice into SQL unquoted. */
export function benchSchemaName(system: PgSystem, scenario: PgScenario): string {
  return `bench_${system.replace(/-/g, '_')}_${scenario}_${process.pid}`;
}
