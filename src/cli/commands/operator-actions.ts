/** `kiln cancel`, `kiln resume` and `kiln replay`: operator actions on runs and jobs. */
import type { Command } from 'commander';
import type { CliContext } from '../cli-context.ts';
import { withCommandRuntime, type GlobalOptions } from '../global-options.ts';

interface CancelOptions extends GlobalOptions {
  reason?: string;
}

/** Registers `kiln cancel <id>`, `kiln resume <id>` and `kiln replay <jobId>`. */
export function registerOperatorCommands(program: Command, ctx: CliContext): void {
  program
    .command('cancel <runId>')
    .description('cancel a run that has not ended (in-flight handlers are aborted)')
    .option('--reason <text>', 'recorded as the run error message')
    .action((runId: string, _o: CancelOptions, cmd: Command) => {
      const opts = cmd.optsWithGlobals<CancelOptions>();
      return withCommandRuntime(ctx, opts, async ({ kiln }) => {
        const run = await kiln.cancelRun(runId, opts.reason);
        ctx.out(`run ${run.id} ${run.status}`);
      });
    });

  program
    .command('resume <runId>')
    .description('resume a parked run from the stage it parked at')
    .action((runId: string, _o: GlobalOptions, cmd: Command) =>
      withCommandRuntime(ctx, cmd.optsWithGlobals<GlobalOptions>(), async ({ kiln }) => {
        const run = await kiln.resumeRun(runId);
        ctx.out(`run ${run.id} ${run.status}`);
      }),
    );

  program
    .command('replay <jobId>')
    .description('replay a dead-lettered job (find ids with `kiln jobs --state dead`)')
    .action((jobId: string, _o: GlobalOptions, cmd: Command) =>
      withCommandRuntime(ctx, cmd.optsWithGlobals<GlobalOptions>(), async ({ kiln }) => {
        const job = await kiln.replayJob(jobId);
        ctx.out(`job ${job.id} ${job.state} (run ${job.runId}, queue ${job.queue})`);
      }),
    );
}
