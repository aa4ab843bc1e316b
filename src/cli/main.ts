/**
 * The `kiln` command: builds the command tree, runs one command and exits. The only place in kiln
 * that calls `process.exit` or installs signal handlers; errors become `kiln: <code>: <message>` on
 * stderr and an exit code from the one table in `exit-codes.ts`.
 */
import { Command, CommanderError } from 'commander';
import { PipelineError } from '../core/errors.ts';
import type { CliContext } from './cli-context.ts';
import { registerAssetsCommands } from './commands/assets.ts';
import { registerDoctorCommand } from './commands/doctor.ts';
import { registerGcCommand } from './commands/gc.ts';
import { registerJobsCommand } from './commands/jobs.ts';
import { registerMigrateCommand } from './commands/migrate.ts';
import { registerOperatorCommands } from './commands/operator-actions.ts';
import { registerPruneCommand } from './commands/prune.ts';
import { registerQrCommand } from './commands/qr.ts';
import { registerQueueCommands } from './commands/queues.ts';
import { registerRunsCommands } from './commands/runs.ts';
import { registerServeCommand } from './commands/serve.ts';
import { registerSubmitCommand } from './commands/submit.ts';
import { registerTokensCommands } from './commands/tokens.ts';
import { registerValidateCommand } from './commands/validate.ts';
import { registerVerifyCommand } from './commands/verify.ts';
import { registerWorkerCommand } from './commands/worker.ts';
import { exitCodeFor } from './exit-codes.ts';
import { kilnVersion } from './kiln-version.ts';
import { addGlobalOptions } from './global-options.ts';

/** Exit codes after a second signal, by shell convention 128 + signal number. */
const FORCED_EXIT_CODES: Readonly<Record<string, number>> = { SIGINT: 130, SIGTERM: 143 };

/** The command tree, bound to `ctx`. */
export function buildProgram(ctx: CliContext): Command {
  const program = new Command('kiln')
    .description('multi-stage pipelines on worker queues, with exactly-once state')
    .version(kilnVersion())
    .showHelpAfterError()
    // Commander would call process.exit itself; we want every exit to go through main().
    .exitOverride();
  addGlobalOptions(program);
  registerServeCommand(program, ctx);
  registerWorkerCommand(program, ctx);
  registerSubmitCommand(program, ctx);
  registerRunsCommands(program, ctx);
  registerJobsCommand(program, ctx);
  registerOperatorCommands(program, ctx);
  registerQueueCommands(program, ctx);
  registerMigrateCommand(program, ctx);
  registerDoctorCommand(program, ctx);
  registerQrCommand(program, ctx);
  registerAssetsCommands(program, ctx);
  registerGcCommand(program, ctx);
  registerPruneCommand(program, ctx);
  registerValidateCommand(program, ctx);
  registerVerifyCommand(program, ctx);
  registerTokensCommands(program, ctx);
  return program;
}

/** The real process as a {@link CliContext}. */
function processContext(): CliContext {
  let shutdown: Promise<string> | undefined;
  return {
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    exitCode: 0,
    shutdownRequested() {
      shutdown ??= new Promise((resolve) => {
        let received = false;
        const onSignal = (signal: NodeJS.Signals): void => {
          if (received) {
            process.stderr.write(`kiln: ${signal} again, exiting without waiting\n`);
            process.exit(FORCED_EXIT_CODES[signal] ?? 1);
          }
          received = true;
          resolve(signal);
        };
        process.on('SIGTERM', onSignal);
        process.on('SIGINT', onSignal);
      });
      return shutdown;
    },
  };
}

/** Prints a failed command's error and picks its exit code. */
function reportError(err: unknown, ctx: CliContext): number {
  if (err instanceof CommanderError) {
    // Commander already printed usage or help; a usage mistake is a validation failure.
    return err.exitCode === 0 ? 0 : exitCodeFor('VALIDATION_FAILED');
  }
  if (err instanceof PipelineError) {
    ctx.err(`kiln: ${err.code}: ${err.message}`);
    return exitCodeFor(err.code);
  }
  // Node's system errors (EADDRINUSE, ENOENT, ...) carry a code worth showing as is.
  const nodeCode = (err as { code?: unknown } | null)?.code;
  const code = typeof nodeCode === 'string' ? nodeCode : 'INTERNAL';
  ctx.err(`kiln: ${code}: ${err instanceof Error ? err.message : String(err)}`);
  if (ctx.env.KILN_DEBUG && err instanceof Error && err.stack) ctx.err(err.stack);
  return exitCodeFor(code);
}

/** Runs the command in `argv` (without node and script) and exits the process. */
export async function main(argv: readonly string[]): Promise<never> {
  const ctx = processContext();
  let code: number;
  try {
    await buildProgram(ctx).parseAsync([...argv], { from: 'user' });
    code = ctx.exitCode;
  } catch (err) {
    code = reportError(err, ctx);
  }
  process.exit(code);
}
