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
  worker?: boolean;
}

/** How long `--worker` waits for the run when `--wait` says nothing. */
const WORKER_DEFAULT_WAIT_MS = 600_000;


async function submit(ctx: CliContext, pipeline: string, inputJson: string | undefined, opts: SubmitCommandOptions): Promise<void> {
  const input = inputJson === undefined ? {} : parseJsonArgument(inputJson, 'input');
  await withCommandRuntime(ctx, opts, async (rt) => {
    const { kiln } = rt;
    const options: SubmitOptions = opts.idempotencyKey === undefined ? {} : { idempotencyKey: opts.idempotencyKey };
    const { run, created } = await kiln.submit(pipeline, input, options);
    if (!created) ctx.err(`kiln: idempotency key matched existing run ${run.id}`);
    const waitMs = opts.wait ?? (opts.worker ? WORKER_DEFAULT_WAIT_MS : undefined);
    if (waitMs === undefined) {
      ctx.out(opts.json ? JSON.stringify(runView(run), null, 2) : run.id);
      return;
    }
    // Some worker has to run it: this process's own (`--worker`), or `kiln serve`/`kiln worker` on the same store.
    const worker = opts.worker ? rt.createWorker({}) : undefined;
    worker?.start();
    try {
      const detail = await kiln.waitForRun(run.id, { timeoutMs: waitMs });
      ctx.out(opts.json ? JSON.stringify(runDetailView(detail), null, 2) : formatRunDetail(detail));
      if (detail.run.status !== 'succeeded') ctx.exitCode = ExitCode.failure;
    } finally {
      await worker?.stop(1_000);
    }
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
    .option('--worker', `also run a worker in this process until the run ends (waits ${WORKER_DEFAULT_WAIT_MS / 60_000} min unless --wait says otherwise)`)
    .action((pipeline: string, inputJson: string | undefined, _o: SubmitCommandOptions, cmd: Command) =>
      submit(ctx, pipeline, inputJson, cmd.optsWithGlobals<SubmitCommandOptions>()),
    );
}
