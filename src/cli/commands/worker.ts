/** `kiln worker`: claims and runs jobs until SIGTERM/SIGINT; no HTTP. */
import type { Command } from 'commander';
import { describeStore } from '../../config/store-url.ts';
import type { CliContext } from '../cli-context.ts';
import { openCommandRuntime, type GlobalOptions } from '../global-options.ts';
import { parseList } from './option-parsers.ts';

interface WorkerCommandOptions extends GlobalOptions {
  queues?: string[];
  workerId?: string;
}

async function runWorker(ctx: CliContext, options: WorkerCommandOptions): Promise<void> {
  const shutdown = ctx.shutdownRequested();
  const rt = await openCommandRuntime(ctx, options, { command: 'worker' });
  const { config, logger } = rt;
  const worker = rt.createWorker({
    ...(options.workerId === undefined ? {} : { workerId: options.workerId }),
    ...(options.queues === undefined ? {} : { queues: options.queues }),
  });
  worker.start();
  logger.info(
    { worker_id: worker.id, queues: options.queues ?? 'all', store: describeStore(config.store), traces: rt.tracing.endpoint ?? 'off' },
    'kiln worker started',
  );

  const signal = await shutdown;
  logger.info({ signal, in_flight: worker.inFlight(), grace_ms: config.worker.shutdownGraceMs }, 'shutting down');
  await worker.stop(config.worker.shutdownGraceMs);
  await rt.close();
  logger.info({ signal }, 'stopped');
}

/** Registers `kiln worker`. */
export function registerWorkerCommand(program: Command, ctx: CliContext): void {
  program
    .command('worker')
    .description('run a worker only (shares the store with other processes)')
    .option('--queues <queues>', 'queues to serve, comma-separated <pipeline>.<stage> (default all)', parseList)
    .option('--worker-id <id>', 'lease owner name (default random)')
    .action((_opts: WorkerCommandOptions, cmd: Command) => runWorker(ctx, cmd.optsWithGlobals<WorkerCommandOptions>()));
}
