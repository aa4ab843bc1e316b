/** `kiln queues` and the queue controls `pause`, `resume-queue` and `drain`. */
import type { Command } from 'commander';
import { queueView } from '../../http/views.ts';
import type { CliContext } from '../cli-context.ts';
import { withCommandRuntime, type GlobalOptions } from '../global-options.ts';
import { formatDurationMs, renderTable } from '../text-output.ts';

interface QueuesOptions extends GlobalOptions {
  json?: boolean;
}

/** Registers `kiln queues`, `kiln pause`, `kiln resume-queue` and `kiln drain`. */
export function registerQueueCommands(program: Command, ctx: CliContext): void {
  program
    .command('queues')
    .description('queue depth: ready, scheduled, in flight, parked, dead, oldest ready age')
    .option('--json', 'print JSON (the same shape as GET /v1/queues)')
    .action((_o: QueuesOptions, cmd: Command) => {
      const opts = cmd.optsWithGlobals<QueuesOptions>();
      return withCommandRuntime(ctx, opts, async ({ kiln }) => {
        const queues = (await kiln.queues()).map(queueView);
        if (opts.json) return ctx.out(JSON.stringify(queues, null, 2));
        const rows = queues.map((q) => [
          q.queue,
          q.paused ? 'paused' : 'active',
          String(q.ready),
          String(q.scheduled),
          String(q.inFlight),
          String(q.parked),
          String(q.dead),
          q.ready > 0 ? formatDurationMs(q.oldestReadyAgeMs) : '-',
        ]);
        ctx.out(renderTable(['QUEUE', 'STATE', 'READY', 'SCHEDULED', 'IN FLIGHT', 'PARKED', 'DEAD', 'OLDEST READY'], rows));
      });
    });

  program
    .command('pause <queue>')
    .description('stop claims from a queue (jobs stay queued)')
    .action((queue: string, _o: GlobalOptions, cmd: Command) =>
      withCommandRuntime(ctx, cmd.optsWithGlobals<GlobalOptions>(), async ({ kiln }) => {
        await kiln.pauseQueue(queue);
        ctx.out(`queue ${queue} paused`);
      }),
    );

  program
    .command('resume-queue <queue>')
    .description('let workers claim from a paused queue again')
    .action((queue: string, _o: GlobalOptions, cmd: Command) =>
      withCommandRuntime(ctx, cmd.optsWithGlobals<GlobalOptions>(), async ({ kiln }) => {
        await kiln.resumeQueue(queue);
        ctx.out(`queue ${queue} resumed`);
      }),
    );

  program
    .command('drain <queue>')
    .description('remove the ready jobs of a queue and cancel their runs (leased jobs finish)')
    .action((queue: string, _o: GlobalOptions, cmd: Command) =>
      withCommandRuntime(ctx, cmd.optsWithGlobals<GlobalOptions>(), async ({ kiln }) => {
        const removed = await kiln.drainQueue(queue);
        ctx.out(`queue ${queue} drained: ${removed} job${removed === 1 ? '' : 's'} removed`);
      }),
    );
}
