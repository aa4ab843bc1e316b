/**
 * Arguments of one Redis benchmark child. The server URL comes from `KILN_BENCH_REDIS_URL` (the
 * suite sets it), not argv, so a password never shows in `ps`.
 */
import { parseArgs } from 'node:util';
import { positiveInt } from '../engine/engine-args.ts';
import { parseSubmitMode, type SubmitMode } from '../engine/submit-heads.ts';
import { PgScenario } from '../engine-pg/pg-bench-result.ts';
import { REDIS_SYSTEMS, type RedisSystem } from './redis-bench-result.ts';

/** The environment variable carrying the server's URL to the children. */
export const REDIS_URL_ENV = 'KILN_BENCH_REDIS_URL';

/** What one child measures. */
export interface RedisChildArgs {
  system: RedisSystem;
  scenario: PgScenario;
  /** No-op jobs or chains. */
  count: number;
  concurrency: number;
  /** How the chains scenario's heads (and their warm-up) are submitted. */
  submit: SubmitMode;
  url: string;
}

/** Parses `--system S --scenario noop|chains --count N --concurrency C [--submit single|bulk]`; the URL from {@link REDIS_URL_ENV}. */
export function parseRedisChildArgs(argv: readonly string[]): RedisChildArgs {
  const { values } = parseArgs({
    args: [...argv],
    options: { system: { type: 'string' }, scenario: { type: 'string' }, count: { type: 'string' }, concurrency: { type: 'string' }, submit: { type: 'string' } },
  });
  const { system, scenario } = values;
  if (!(REDIS_SYSTEMS as readonly (string | undefined)[]).includes(system)) throw new Error(`--system must be one of ${REDIS_SYSTEMS.join(', ')}, got "${system}"`);
  if (scenario !== PgScenario.Noop && scenario !== PgScenario.Chains) throw new Error(`--scenario must be noop or chains, got "${scenario}"`);
  const url = process.env[REDIS_URL_ENV];
  if (!url) throw new Error(`${REDIS_URL_ENV} is not set`);
  if (values.count === undefined) throw new Error('--count is required');
  return {
    system: system as RedisSystem,
    scenario,
    count: positiveInt('count', values.count, 1),
    concurrency: positiveInt('concurrency', values.concurrency, 10),
    submit: parseSubmitMode(values.submit),
    url,
  };
}
