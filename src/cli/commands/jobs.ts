/** `kiln jobs`: list jobs, e.g. the dead ones to replay. */
import { Option, type Command } from 'commander';
import { JobState } from '../../core/model.ts';
import { jobView } from '../../http/views.ts';
import type { CliContext } from '../cli-context.ts';
import { withCommandRuntime, type GlobalOptions } from '../global-options.ts';
import { formatTime, renderTable } from '../text-output.ts';
import { parsePositiveInt } from './option-parsers.ts';

interface JobsOptions extends GlobalOptions {
  queue?: string;
  state?: JobState;
  run?: string;
  limit?: number;
  json?: boolean;
}

/** Registers `kiln jobs`. */
export function registerJobsCommand(program: Command, ctx: CliContext): void {
  program
    .command('jobs')
    .description('list jobs, oldest first')
    .option('--queue <queue>', 'only this queue')
    .addOption(new Option('--state <state>', 'only jobs in this state').choices(Object.values(JobState)))
    .option('--run <runId>', 'only jobs of this run')
    .option('--limit <n>', 'at most n jobs (default 50)', parsePositiveInt)
    .option('--json', 'print JSON (the same shape as GET /v1/jobs)')
    .action((_o: JobsOptions, cmd: Command) => {
      const opts = cmd.optsWithGlobals<JobsOptions>();
      return withCommandRuntime(ctx, opts, async ({ kiln }) => {
        const jobs = await kiln.listJobs({ queue: opts.queue, state: opts.state, runId: opts.run, limit: opts.limit });
        if (opts.json) return ctx.out(JSON.stringify(jobs.map(jobView), null, 2));
        const rows = jobs.map((j) => [j.id, j.queue, j.state, `${j.attempt}/${j.maxAttempts}`, j.runId, j.leaseOwner ?? '-', formatTime(j.enqueuedAt)]);
        ctx.out(renderTable(['ID', 'QUEUE', 'STATE', 'ATTEMPT', 'RUN', 'LEASE OWNER', 'ENQUEUED'], rows));
      });
    });
}
