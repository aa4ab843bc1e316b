/**
 * The 5-stage chain on BullMQ, shared by the engine suite's BullMQ child and the Redis suite's:
 * one queue and one Worker per stage (concurrency = flag), each processor adding the next
 * stage's job before returning, as BullMQ users chain stages.
 */
import { Queue, Worker, type ConnectionOptions, type Job } from 'bullmq';
import { stageCompleted, stageStarted, type ChainProbe } from './chain-probe.ts';
import { STAGE_COUNT } from './kiln-bench.ts';

/** Builds the chain: one queue and one worker per stage; workers record start and completion. */
export function buildChain(connection: ConnectionOptions, concurrency: number, probe: ChainProbe): { queues: Queue[]; workers: Worker[] } {
  const names = Array.from({ length: STAGE_COUNT }, (_, i) => `bench-s${i + 1}`);
  const queues = names.map((name) => new Queue(name, { connection }));
  const workers = names.map((name, i) => {
    const next = queues[i + 1];
    const worker = new Worker(
      name,
      async (job: Job) => {
        stageStarted(probe, `${name}:${job.id}`);
        if (next) await next.add(names[i + 1] ?? '', job.data);
        return null;
      },
      { connection, concurrency },
    );
    worker.on('completed', (job) => stageCompleted(probe, `${name}:${job.id}`, !next));
    worker.on('failed', () => probe.failed++);
    return worker;
  });
  return { queues, workers };
}
