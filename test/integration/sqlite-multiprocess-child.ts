/**
 * Child process of `sqlite-multiprocess.test.ts`. Opens the SQLite backend on a shared file,
 * prints `ready`, waits for `go` on stdin (so siblings start together), then either migrates
 * (`migrate <db>`) or claims and completes jobs of one queue until none is left
 * (`work <db> <queue> <workerId>`). Prints one JSON line with what it did.
 */
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { createSqliteBackend } from '../../src/backends/sqlite/index.ts';
import { PipelineError } from '../../src/core/errors.ts';
import type { Backend, CommitItem } from '../../src/core/ports.ts';

const [mode, dbPath, queue = '', workerId = ''] = process.argv.slice(2);
if (dbPath === undefined) throw new Error('usage: sqlite-multiprocess-child.ts migrate|work <db> [queue workerId]');

async function waitForGo(): Promise<void> {
  const lines = createInterface({ input: process.stdin });
  process.stdout.write('ready\n');
  await once(lines, 'line');
  lines.close();
}

/** Retries an operation that failed because a sibling held the write lock too long. */
async function retrying<T>(op: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await op();
    } catch (err) {
      if (!(err instanceof PipelineError && err.retryable)) throw err;
    }
  }
}

async function work(backend: Backend): Promise<string[]> {
  const claimedIds: string[] = [];
  for (;;) {
    const claimed = await retrying(() => backend.claimJobs([{ queue, workerId, limit: 5, leaseMs: 60_000 }]));
    // Nothing is ever added to the queue and leases never expire here, so empty means done.
    if (claimed.length === 0) return claimedIds;
    // The whole claimed batch commits in one transaction (group commit), as the engine does.
    const items = claimed.map(({ job }): CommitItem => {
      claimedIds.push(job.id);
      const lease = { jobId: job.id, token: job.leaseToken ?? '' };
      return { type: 'complete', lease, output: { workerId }, durationMs: 0, next: null };
    });
    const results = await retrying(() => backend.commit(items));
    results.forEach((result, i) => {
      if (result.outcome !== 'committed') throw new Error(`commit of ${claimed[i]?.job.id} refused: ${result.outcome}`);
    });
  }
}

const backend = createSqliteBackend({ path: dbPath });
try {
  await waitForGo();
  if (mode === 'migrate') {
    process.stdout.write(`${JSON.stringify(await backend.migrate())}\n`);
  } else {
    process.stdout.write(`${JSON.stringify({ workerId, claimed: await work(backend) })}\n`);
  }
} finally {
  await backend.close();
}
