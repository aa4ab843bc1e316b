/** `kiln submit <pipeline> [inputJson]`: submits a run straight into the store. */
import type { Command } from 'commander';
import type { SubmitOptions } from '../../engine/kiln-types.ts';
import { runDetailView, runView } from '../../http/views.ts';
import type { CliContext } from '../cli-context.ts';
import { ExitCode } from '../exit-codes.ts';
import { withCommandRuntime, type GlobalOptions } from '../global-options.ts';
import { parseJsonArgument, parsePositiveInt } from './option-parsers.ts';
import { formatRunDetail } from './runs.ts';

interface SubmitCommandOptions extends GlobalOptions {
  idempotencyKey?: string;
  wait?: number;
  json?: boolean;
}


async function submit(ctx: CliContext, pipeline: string, inputJson: string | undefined, opts: SubmitCommandOptions): Promise<void> {
  const input = inputJson === undefined ? {} : parseJsonArgument(inputJson, 'input');
  await withCommandRuntime(ctx, opts, async ({ kiln }) => {
    const options: SubmitOptions = opts.idempotencyKey === undefined ? {} : { idempotencyKey: opts.idempotencyKey };
    const { run, created } = await kiln.submit(pipeline, input, options);
    if (!created) ctx.err(`kiln: idempotency key matched existing run ${run.id}`);
    if (opts.wait === undefined) {
      ctx.out(opts.json ? JSON.stringify(runView(run), null, 2) : run.id);
      return;
    }
    // Some worker (`kiln serve` or `kiln worker` on the same store) has to run it.
    const detail = await kiln.waitForRun(run.id, { timeoutMs: opts.wait });
    ctx.out(opts.json ? JSON.stringify(runDetailView(detail), null, 2) : formatRunDetail(detail));
    if (detail.run.status !== 'succeeded') ctx.exitCode = ExitCode.failure;
  });
}

/** Registers `kiln submit`. */
export function registerSubmitCommand(program: Command, ctx: CliContext): void {
  program
    .command('submit <pipeline> [inputJson]')
    .description('submit a run (prints its id); a worker on the same store runs it')
    .option('--idempotency-key <key>', 'deduplicate: the same key returns the same run')
    .option('--wait <ms>', 'wait up to ms for the run to end; exit 1 unless it succeeded', parsePositiveInt)
    .option('--json', 'print JSON')
    .action((pipeline: string, inputJson: string | undefined, _o: SubmitCommandOptions, cmd: Command) =>
      submit(ctx, pipeline, inputJson, cmd.optsWithGlobals<SubmitCommandOptions>()),
    );
}
