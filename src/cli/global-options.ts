/**
 * Options every command accepts (before or after the command name): where the config and the
 * store are, which extra pipelines to register, how much to log.
 */
import type { Command } from 'commander';
import { builtinPipelines } from '../pipelines/index.ts';
import type { CliContext } from './cli-context.ts';
import { loadPipelines, parseModuleList, PIPELINES_ENV } from './load-pipelines.ts';
import { openRuntime, type Runtime, type RuntimeFlags, type RuntimeOptions } from './runtime.ts';

/** Parsed global options. */
export interface GlobalOptions {
  config?: string;
  db?: string;
  /** `postgres://...`, `redis://...` or `sqlite:<path>`. */
  store?: string;
  pipelines?: string;
  logLevel?: string;
  logFormat?: string;
}

/** Adds the global options to the root command. */
export function addGlobalOptions(program: Command): Command {
  return program
    .option('--config <file>', 'kiln.yaml to read (default ./kiln.yaml if present; env KILN_CONFIG)')
    .option('--db <path>', 'SQLite store file (default ./kiln.db; env KILN_DB)')
    .option('--store <url>', 'store to use: postgres://user:password@host:5432/db, redis://host:6379[/db][?name=<store name>] or sqlite:<path> (env KILN_STORE; default SQLite ./kiln.db)')
    .option('--pipelines <modules>', `extra pipeline modules, comma-separated (env ${PIPELINES_ENV})`)
    .option('--log-level <level>', 'trace|debug|info|warn|error|fatal|silent (env KILN_LOG_LEVEL)')
    .option('--log-format <format>', 'json|pretty|auto: auto is pretty on a terminal, else json (env KILN_LOG_FORMAT)');
}

/** Where a command's logs go and which fields its own flags override. */
export interface CommandExtras {
  flags?: RuntimeFlags;
  logDestination?: NodeJS.WritableStream;
  /** The command's name, as its spans record it. */
  command?: string;
}

/**
 * The runtime options of a command from its options (`cmd.optsWithGlobals()`): the built-in
 * pipelines plus `--pipelines` (or `KILN_PIPELINES`) modules, and the global flags.
 */
export async function commandRuntimeOptions(ctx: CliContext, options: GlobalOptions, extra: CommandExtras = {}): Promise<RuntimeOptions> {
  const specs = parseModuleList(options.pipelines ?? ctx.env[PIPELINES_ENV]);
  const pipelines = await loadPipelines(builtinPipelines, specs, ctx.cwd);
  const flags: RuntimeFlags = { ...extra.flags };
  if (options.db !== undefined) flags.db = options.db;
  if (options.store !== undefined) flags.store = options.store;
  if (options.logLevel !== undefined) flags.logLevel = options.logLevel;
  if (options.logFormat !== undefined) flags.logFormat = options.logFormat;
  return {
    ...(options.config === undefined ? {} : { configFile: options.config }),
    flags,
    pipelines,
    env: ctx.env,
    cwd: ctx.cwd,
    ...(extra.logDestination === undefined ? {} : { logDestination: extra.logDestination }),
    ...(extra.command === undefined ? {} : { command: extra.command }),
  };
}

/** Opens the runtime (store migrated, engine built) for a command; see {@link commandRuntimeOptions}. */
export async function openCommandRuntime(ctx: CliContext, options: GlobalOptions, extra: CommandExtras = {}): Promise<Runtime> {
  return openRuntime(await commandRuntimeOptions(ctx, options, extra));
}

/**
 * Opens the runtime, runs `fn` and always closes the store (operator commands). Logs go to
 * stderr, so stdout carries only the command's result (`--json` output stays parseable).
 */
export async function withCommandRuntime<T>(ctx: CliContext, options: GlobalOptions, fn: (rt: Runtime) => Promise<T>): Promise<T> {
  const rt = await openCommandRuntime(ctx, options, { logDestination: ctx.stderr });
  try {
    return await fn(rt);
  } finally {
    await rt.close();
  }
}
