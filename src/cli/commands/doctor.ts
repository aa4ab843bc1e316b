/**
 * `kiln doctor`: checks the configured store without changing it — connectivity (time to the first
 * answer), schema version against this code's, clock skew between this host and the store, and on
 * Redis the server's version, persistence and eviction policy — and prints one row per check
 * with what to do. Exit 0 unless a check failed, then 1.
 */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { StoreKind, type ResolvedStore } from '../../config/schema.ts';
import { describeStore } from '../../config/store-url.ts';
import { StoreUnavailableError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { Store } from '../../core/ports/store.ts';
import type { CliContext } from '../cli-context.ts';
import { allPassed, DEFAULT_TIMEOUT_MS, runDoctorChecks, type DoctorCheck } from '../doctor-checks.ts';
import { ExitCode } from '../exit-codes.ts';
import { commandRuntimeOptions, type GlobalOptions } from '../global-options.ts';
import { openStore } from '../open-store.ts';
import { redisServerCheckSet } from '../redis-server-checks.ts';
import { loadRuntimeConfig } from '../runtime.ts';
import { renderTable } from '../text-output.ts';
import { parsePositiveInt } from './option-parsers.ts';

interface DoctorCommandOptions extends GlobalOptions {
  json?: boolean;
  timeout?: number;
}

/**
 * Opens the store for inspection only. A SQLite file that does not exist is reported, not created:
 * a typo in the path should not leave an empty store behind.
 */
function openForInspection(store: ResolvedStore, logger: Logger): () => Promise<Store> {
  return async () => {
    if (store.kind === StoreKind.sqlite && store.path !== ':memory:' && !existsSync(store.path)) {
      throw new StoreUnavailableError(`no SQLite store at ${store.path}`);
    }
    return openStore(store, { logger });
  };
}

function printReport(ctx: CliContext, store: ResolvedStore, checks: readonly DoctorCheck[], json: boolean): void {
  if (json) {
    ctx.out(JSON.stringify({ store: describeStore(store), ok: allPassed(checks), checks }));
    return;
  }
  ctx.out(`store: ${describeStore(store)}`);
  ctx.out(
    renderTable(
      ['CHECK', 'STATUS', 'RESULT', 'ACTION'],
      checks.map((c) => [c.name, c.status, c.result, c.action ?? '-']),
    ),
  );
}

async function doctor(ctx: CliContext, options: DoctorCommandOptions): Promise<void> {
  const runtimeOptions = await commandRuntimeOptions(ctx, options, { logDestination: ctx.stderr });
  const { config, logger } = loadRuntimeConfig(runtimeOptions);
  const timeoutMs = options.timeout ?? DEFAULT_TIMEOUT_MS;
  const store = config.store;
  const checks = await runDoctorChecks(openForInspection(store, logger), {
    store,
    timeoutMs,
    ...(store.kind === StoreKind.redis ? { serverChecks: redisServerCheckSet(store.url, timeoutMs) } : {}),
  });
  printReport(ctx, config.store, checks, options.json === true);
  ctx.exitCode = allPassed(checks) ? ExitCode.ok : ExitCode.failure;
}

/** Registers `kiln doctor`. */
export function registerDoctorCommand(program: Command, ctx: CliContext): void {
  program
    .command('doctor')
    .description('check the store: connectivity, schema version, clock skew; on Redis also version, persistence, eviction (read-only; exit 1 if a check fails)')
    .option('--timeout <ms>', 'bound on connecting and on each query, ms (default 5000)', parsePositiveInt)
    .option('--json', 'print {store, ok, checks: [{name, status, result, action}]} as JSON')
    .action((_o: DoctorCommandOptions, cmd: Command) => doctor(ctx, cmd.optsWithGlobals<DoctorCommandOptions>()));
}
