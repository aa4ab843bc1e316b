/**
 * `kiln validate [kiln.yaml]`: checks a configuration without starting anything (no store is
 * opened, nothing runs): unknown fields, bad durations and values, template references to
 * undeclared inputs or to stages that do not exist (or have not run yet), clashing names and
 * queues, and programs of declared pipelines that cannot be found. Prints every problem as
 * `file:line:column: field: message`, then exits with CONFIG_INVALID's exit code.
 */
import { isAbsolute, relative } from 'node:path';
import type { Command } from 'commander';
import { loadConfig } from '../../config/load.ts';
import { programExists } from '../../config/find-program.ts';
import { ConfigError, type ConfigIssue } from '../../core/errors.ts';
import { builtinPipelines } from '../../pipelines/index.ts';
import type { CliContext } from '../cli-context.ts';
import { exitCodeFor } from '../exit-codes.ts';
import type { GlobalOptions } from '../global-options.ts';
import { loadPipelines, parseModuleList, PIPELINES_ENV } from '../load-pipelines.ts';

/** A path as the user would type it from here. */
function shown(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

/** One issue per line: `file:line:column: field: message` (the position as far as it is known). */
export function formatIssue(issue: ConfigIssue, cwd: string): string {
  const where = [shown(issue.source, cwd), issue.line, issue.line === undefined ? undefined : issue.column].filter((p) => p !== undefined).join(':');
  return `${where}: ${issue.path || '(root)'}: ${issue.message}`;
}

async function validate(ctx: CliContext, file: string | undefined, options: GlobalOptions): Promise<void> {
  const pipelines = await loadPipelines(builtinPipelines, parseModuleList(options.pipelines ?? ctx.env[PIPELINES_ENV]), ctx.cwd);
  const configFile = file ?? options.config;
  try {
    const config = loadConfig({
      ...(configFile === undefined ? {} : { file: configFile }),
      env: { ...ctx.env },
      cwd: ctx.cwd,
      flags: {
        ...(options.db === undefined ? {} : { db: options.db }),
        ...(options.store === undefined ? {} : { store: options.store }),
        ...(options.logLevel === undefined ? {} : { logLevel: options.logLevel }),
      },
      pipelines,
      findProgram: programExists,
    });
    if (config.source === null) {
      ctx.err('kiln: no kiln.yaml here (give a file, --config or KILN_CONFIG); the defaults are valid');
      return;
    }
    ctx.out(`${shown(config.source, ctx.cwd)}: ok`);
    for (const p of config.commandPipelines) ctx.out(`  pipeline ${p.name} v${p.version}: ${p.stages.map((s) => s.name).join(' -> ')}`);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const issue of err.issues) ctx.out(formatIssue(issue, ctx.cwd));
    ctx.err(`kiln: ${err.code}: ${err.issues.length} problem${err.issues.length === 1 ? '' : 's'}`);
    ctx.exitCode = exitCodeFor(err.code);
  }
}

/** Registers `kiln validate`. */
export function registerValidateCommand(program: Command, ctx: CliContext): void {
  program
    .command('validate [file]')
    .description('check a kiln.yaml (default: --config, KILN_CONFIG or ./kiln.yaml) without starting anything; prints every problem with its line and column')
    .action((file: string | undefined, _o: GlobalOptions, cmd: Command) => validate(ctx, file, cmd.optsWithGlobals<GlobalOptions>()));
}
