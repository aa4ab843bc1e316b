/**
 * Fills a store with finished runs through the store's own ports, in bulk: `jobs.submit` of 1,000
 * runs per transaction, then `jobs.claim` of those 1,000 jobs, a `jobs.commit` of their
 * completions and one of their failures, and `stats.recordActivity` of both — so every row (runs,
 * stage records, ledger, failed attempts, dead jobs, queue activity) is exactly what kiln itself
 * writes, at a few transactions per 1,000 runs. The store's clock is a fake one
 * that moves 10 minutes per batch, so the runs' creation times spread over the last ~17 hours
 * (100,000 runs) and end now, and time filters have something to filter.
 *
 * Mix: 90 % succeeded, 4 % failed (permanent error), 3 % dead-lettered (attempts ran out), 3 %
 * cancelled before they ran; two pipelines (`bench.render` 80 %, `bench.audit` 20 %), ten
 * tenants on two runs in three, a subject on one run in ten.
 */
import { contentHash } from '../../src/core/canonical.ts';
import type { FakeClock } from '../../src/core/clock.ts';
import type { CommitItem, JobSpec, SubmitRunRequest } from '../../src/core/ports/jobs.ts';
import type { Store } from '../../src/core/ports/store.ts';

export const BATCH = 1_000;
/** Clock step between batches: spreads 100 batches over ~17 hours. */
export const BATCH_STEP_MS = 10 * 60_000;

/** What the fill left, for the scenarios to aim at. */
export interface FillResult {
  runs: number;
  elapsedMs: number;
  /** Ids in submission order (oldest first), to pick deep-page cursors from. */
  ids: string[];
  /** Creation time of the newest batch (store clock). */
  newestCreatedAt: number;
}

function job(pipeline: string): JobSpec {
  return { stage: 'work', queue: `${pipeline}.work`, kind: 'stage', maxAttempts: 2, priority: 0 };
}

function request(n: number): SubmitRunRequest {
  const pipeline = n % 5 === 0 ? 'bench.audit' : 'bench.render';
  const input = { n };
  return {
    pipeline,
    pipelineVersion: 1,
    input,
    inputChecksum: contentHash(input),
    stages: ['work'],
    firstJob: job(pipeline),
    ...(n % 3 === 0 ? {} : { tenant: `tenant-${n % 10}` }),
    ...(n % 10 === 7 ? { subjectId: `asset_${n}`, subjectVersion: 1 } : {}),
  };
}

/** The outcome of run `n`'s attempt (`null`: it was cancelled before it ran). */
function outcome(n: number, lease: { jobId: string; token: string }): CommitItem {
  const kind = n % 100;
  if (kind < 4) return { type: 'fail', lease, durationMs: 3, error: { class: 'permanent', code: 'BAD_INPUT', message: `input ${n} is not renderable` }, decision: { action: 'fail', rollback: null } };
  if (kind < 7) return { type: 'fail', lease, durationMs: 30_000, error: { class: 'transient', code: 'TIMEOUT', message: 'renderer timed out' }, decision: { action: 'dead_letter', rollback: null } };
  return { type: 'complete', lease, durationMs: 12, output: { artifact: `sha256:${contentHash({ n })}` }, next: null };
}

/**
 * Submits, claims and commits `total` runs in batches, recording their queue activity as a worker
 * would; `onProgress` after each batch.
 */
export async function fillRuns(store: Store, clock: FakeClock, total: number, onProgress: (done: number) => void): Promise<FillResult> {
  const started = performance.now();
  const ids: string[] = [];
  for (let offset = 0; offset < total; offset += BATCH) {
    const count = Math.min(BATCH, total - offset);
    const results = await store.jobs.submit(Array.from({ length: count }, (_, i) => request(offset + i)));
    const byRun = new Map(results.map((r, i) => [r.run.id, offset + i]));
    for (const [i, r] of results.entries()) {
      ids.push(r.run.id);
      if ((offset + i) % 100 >= 97) await store.operator.cancelRun(r.run.id, 'not needed');
    }
    const claimed = await store.jobs.claim(['bench.render.work', 'bench.audit.work'].map((queue) => ({ queue, workerId: 'bench-fill', limit: count, leaseMs: 600_000 })));
    const items = claimed.map((c) => outcome(byRun.get(c.run.id) ?? 0, { jobId: c.job.id, token: c.job.leaseToken ?? '' }));
    // Completions apart from failures: a batch of completions only is PostgreSQL's set-wise path.
    await store.jobs.commit(items.filter((item) => item.type === 'complete'));
    await store.jobs.commit(items.filter((item) => item.type === 'fail'));
    // What a worker would report for them (queue activity).
    await store.stats.recordActivity(claimed.map((c, i) => ({ queue: c.job.queue, completed: items[i]?.type === 'complete' ? 1 : 0, failed: items[i]?.type === 'fail' ? 1 : 0 })));
    onProgress(offset + count);
    if (offset + count < total) await clock.advance(BATCH_STEP_MS);
  }
  return { runs: total, elapsedMs: performance.now() - started, ids, newestCreatedAt: clock.now() };
}
