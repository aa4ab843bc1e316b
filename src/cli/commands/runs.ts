/** `kiln runs` (list) and `kiln run <id>` (one run with its stage timeline). */
import { Option, type Command } from 'commander';
import { RunStatus } from '../../core/model.ts';
import type { RunDetail } from '../../core/ports/reads.ts';
import { runDetailView, runView } from '../../http/views.ts';
import type { CliContext } from '../cli-context.ts';
import { withCommandRuntime, type GlobalOptions } from '../global-options.ts';
import { formatDurationMs, formatTime, renderTable } from '../text-output.ts';
import { parsePositiveInt } from './option-parsers.ts';

interface RunsOptions extends GlobalOptions {
  status?: RunStatus;
  pipeline?: string;
  subject?: string;
  limit?: number;
  before?: string;
  json?: boolean;
}

interface RunOptions extends GlobalOptions {
  json?: boolean;
}

/** The stage timeline of a run, as `kiln run` prints it. */
export function formatRunDetail(detail: RunDetail): string {
  const { run, stages } = detail;
  const head = [
    `run       ${run.id}`,
    `pipeline  ${run.pipeline} v${run.pipelineVersion}`,
    `status    ${run.status}${run.error ? ` (${run.error.code}: ${run.error.message})` : ''}`,
    `created   ${formatTime(run.createdAt)}    finished ${formatTime(run.finishedAt)}`,
  ];
  const rows = stages.map((s) => [
    s.stage,
    s.status,
    String(s.attempts),
    formatTime(s.startedAt),
    formatDurationMs(s.durationMs),
    s.rollbackStatus ?? '-',
    s.error ? `${s.error.code}: ${s.error.message}` : '',
  ]);
  const table = renderTable(['STAGE', 'STATUS', 'ATTEMPTS', 'STARTED', 'DURATION', 'ROLLBACK', 'ERROR'], rows);
  return `${head.join('\n')}\n\n${table}`;
}

/** Registers `kiln runs` and `kiln run <id>`. */
export function registerRunsCommands(program: Command, ctx: CliContext): void {
  program
    .command('runs')
    .description('list runs, newest first')
    .addOption(new Option('--status <status>', 'only runs with this status').choices(Object.values(RunStatus)))
    .option('--pipeline <name>', 'only runs of this pipeline')
    .option('--subject <id>', 'only runs of this subject (e.g. every version of one asset)')
    .option('--limit <n>', 'at most n runs (default 50)', parsePositiveInt)
    .option('--before <runId>', 'only runs older than this one (pagination)')
    .option('--json', 'print JSON')
    .action((_o: RunsOptions, cmd: Command) => {
      const opts = cmd.optsWithGlobals<RunsOptions>();
      return withCommandRuntime(ctx, opts, async ({ kiln }) => {
        const { status, pipeline, subject, limit, before } = opts;
        const runs = await kiln.listRuns({ status, pipeline, subjectId: subject, limit, before });
        if (opts.json) return ctx.out(JSON.stringify(runs.map(runView), null, 2));
        const rows = runs.map((r) => [r.id, r.pipeline, r.status, r.currentStage ?? '-', formatTime(r.createdAt), formatTime(r.finishedAt)]);
        ctx.out(renderTable(['ID', 'PIPELINE', 'STATUS', 'STAGE', 'CREATED', 'FINISHED'], rows));
      });
    });

  program
    .command('run <id>')
    .description('show one run and its stage timeline')
    .option('--json', 'print JSON (the same shape as GET /v1/runs/:id)')
    .action((id: string, _o: RunOptions, cmd: Command) => {
      const opts = cmd.optsWithGlobals<RunOptions>();
      return withCommandRuntime(ctx, opts, async ({ kiln }) => {
        const detail = await kiln.getRun(id);
        ctx.out(opts.json ? JSON.stringify(runDetailView(detail), null, 2) : formatRunDetail(detail));
      });
    });
}
