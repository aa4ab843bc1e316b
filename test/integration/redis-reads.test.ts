/**
 * The Redis store's reads, stats and audit over more records than one walk of its scripts reads
 * (they walk indexes 200 members at a time) answer what the memory store (the reference reading
 * of the ports) answers: the same scenario runs on both, every listing is read page by page with
 * its cursors (audit scans with theirs), and the answers are compared with each store's ids replaced by labels (run `r<n>`
 * from its input, job `<run>:<stage>:<kind>`). Skipped, with the reason, where no Redis is available.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createFakeClock, type FakeClock } from '../../src/core/clock.ts';
import { createIdGenerator } from '../../src/core/ids.ts';
import type { AuditPage, AuditPageRequest } from '../../src/core/ports/audit.ts';
import type { ListDeadLettersQuery, ListRunsQuery } from '../../src/core/ports/reads.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { createContext } from '../../src/stores/memory/context.ts';
import { buildMemoryStoreOn } from '../../src/stores/memory/store.ts';
import { LEASE_MS, art, claim, failure, leaseOf, onPipeline, stageJob, submit } from '../conformance/fixture.ts';
import { redisSkipReason } from '../support/redis-server.ts';
import { useRedisStores } from '../support/redis-stores.ts';

const RUNS = 450;
const START = Date.UTC(2026, 0, 1);

/** The same work on any store: runs over two pipelines, tenants and subjects, then claims, failures and completions. */
async function scenario(store: Store, clock: FakeClock): Promise<void> {
  await store.migrate();
  for (let n = 0; n < RUNS; n++) {
    const subject = n % 5 === 0 ? { subjectId: `s${n % 15}`, ...(n % 10 === 0 ? { subjectVersion: n } : {}) } : {};
    const run = await submit(store, {
      input: { n },
      ...(n % 4 === 0 ? onPipeline('other') : {}),
      ...(n % 3 === 2 ? {} : { tenant: n % 3 === 0 ? 'acme' : 'bolt' }),
      ...subject,
    });
    if (n % 9 === 4) await store.operator.cancelRun(run.id, 'test');
    await clock.advance(n % 7 === 0 ? 1_000 : 1);
  }
  let k = 0;
  for (const queue of ['demo.a', 'other.a', 'demo.a']) {
    for (const claimed of await claim(store, { queue, workerId: `w${k % 3}`, limit: 60, leaseMs: LEASE_MS })) {
      const lease = leaseOf(claimed);
      const error = failure('transient', `C${k % 3}`);
      switch (k++ % 5) {
        case 0:
          await store.jobs.commit([{ type: 'complete', lease, output: { k }, durationMs: 2, next: stageJob('b') }]);
          break;
        case 1:
          await store.jobs.commit([{ type: 'fail', lease, error, durationMs: 1, decision: { action: 'retry', delayMs: 5_000 } }]);
          break;
        case 2:
          await store.jobs.commit([{ type: 'fail', lease, error, durationMs: 1, decision: { action: 'park' } }]);
          break;
        case 3:
          await store.jobs.commit([{ type: 'fail', lease, error, durationMs: 1, decision: { action: 'dead_letter', rollback: null } }]);
          break;
        default:
          break; // left leased: its lease expires below
      }
    }
    await clock.advance(700);
  }
  const publisher = (await submit(store, { input: { n: RUNS }, ...onPipeline('pub') })) && (await claim(store, { queue: 'pub.a', workerId: 'w', limit: 1, leaseMs: LEASE_MS }))[0];
  assert.ok(publisher);
  const profiles = ['Big', 'preview', 'thumb'];
  const publish = Array.from({ length: 30 }, (_, i) =>
    profiles.slice(0, 1 + (i % 3)).map((profile) => ({ subjectId: `${i % 2 ? 'P' : 'p'}${i}`, profile, artifactRef: art(i), subjectVersion: 1 })),
  ).flat();
  await store.jobs.commit([{ type: 'complete', lease: leaseOf(publisher), output: null, durationMs: 1, next: null, publish }]);
  // A subject whose profiles all go, by name or at once, leaves the publication scans.
  await store.publications.delete('p0');
  await store.publications.delete('P1', ['Big', 'preview']);
  await store.publications.delete('p2', ['Big']);
  await store.stats.recordActivity([{ queue: 'demo.a', completed: 3, failed: 2 }]);
  await store.operator.setQueuePaused('other.a', true);
  // Paused then resumed, never given a job: queue stats still list it.
  await store.operator.setQueuePaused('idle.a', true);
  await store.operator.setQueuePaused('idle.a', false);
  await clock.advance(LEASE_MS + 10_000);
}

/** Replaces a store's ids with labels (and lease tokens with a constant), so two stores' answers compare. */
async function labeller(store: Store): Promise<(value: unknown) => unknown> {
  const labels = new Map<string, string>();
  for (const run of await store.reads.listRuns({ limit: 10 * RUNS })) labels.set(run.id, `r${(run.input as { n: number }).n}`);
  for (const job of await store.reads.listJobs({ limit: 10 * RUNS })) labels.set(job.id, `${labels.get(job.runId)}:${job.stage}:${job.kind}`);
  return (value) =>
    JSON.parse(JSON.stringify(value).replace(/(run|job)_[0-9a-f]{32}/g, (id) => labels.get(id) ?? 'unknown'), (key, v: unknown) =>
      key === 'leaseToken' && v !== null ? 'token' : v,
    );
}

/** Every page of a listing paged by `before` (the last id of the page before). */
async function pagesBefore<Q extends { before?: string; limit: number }, T extends { id: string }>(read: (q: Q) => Promise<T[]>, query: Q): Promise<T[][]> {
  const pages: T[][] = [];
  for (let before: string | undefined; ; ) {
    const page = await read({ ...query, ...(before === undefined ? {} : { before }) });
    pages.push(page);
    const last = page.at(-1);
    if (last === undefined || page.length < query.limit) return pages;
    before = last.id;
    assert.ok(pages.length < 500, 'the listing ends');
  }
}

/** Every page of an audit scan. */
async function scan<T>(read: (page: AuditPageRequest) => Promise<AuditPage<T>>, limit: number): Promise<AuditPage<T>[]> {
  const pages: AuditPage<T>[] = [];
  for (let after: string | null = null; ; ) {
    const page = await read({ after, limit });
    pages.push(page);
    if (page.next === null) return pages;
    after = page.next;
    assert.ok(pages.length < 500, 'the scan ends');
  }
}

/** What the test compares: every read of the sub-ports, paged. */
async function readEverything(store: Store): Promise<Record<string, unknown>> {
  const runQueries: ListRunsQuery[] = [
    { limit: 37 },
    { status: 'cancelled', limit: 7 },
    { status: 'parked', pipeline: 'demo', limit: 5 },
    { tenant: 'acme', pipeline: 'other', limit: 9 },
    { subjectId: 's5', limit: 2 },
    { subjectId: 's0', status: 'superseded', limit: 3 },
    { createdAfter: START + 20_000, createdBefore: START + 60_000, limit: 11 },
  ];
  const deadQueries: ListDeadLettersQuery[] = [{ limit: 3 }, { code: 'C1', limit: 2 }, { queue: 'other.a', limit: 4 }];
  const all = await store.reads.listRuns({ limit: RUNS });
  const some = all.filter((_, i) => i % 41 === 0).map((r) => r.id);
  return {
    runs: await Promise.all(runQueries.map((q) => pagesBefore((query) => store.reads.listRuns(query), q))),
    jobs: await Promise.all(
      [{ limit: 10 * RUNS }, { queue: 'demo.a', state: 'ready' as const, limit: 25 }, { state: 'dead' as const, limit: 500 }, { state: 'leased' as const, limit: 3 }].map((q) =>
        store.reads.listJobs(q),
      ),
    ),
    queueStats: await store.reads.queueStats(),
    deadLetters: await Promise.all(deadQueries.map((q) => pagesBefore((query) => store.reads.listDeadLetters(query), q))),
    runDetails: await Promise.all(some.map((id) => store.reads.getRun(id))),
    ledgers: await Promise.all(some.map((id) => store.reads.readLedger(id))),
    attempts: await Promise.all(all.slice(0, 60).map((r) => store.reads.listAttempts(r.id))),
    activity: await store.stats.queueActivity({ bucketMinutes: 1, buckets: 5 }),
    groups: await store.stats.deadLetterGroups(),
    runJobs: await scan((page) => store.audit.runJobs(page), 13),
    ledgerMismatches: await scan((page) => store.audit.ledgerMismatches(page), 17),
    expiredLeases: await scan((page) => store.audit.expiredLeases({ ...page, graceMs: 1_000 }), 4),
    publications: await Promise.all([1, 4].map((limit) => scan((page) => store.audit.publications(page), limit))),
    artifactRefs: (await store.artifactRefs.list()).sort(),
  };
}

describe('Redis reads, stats and audit at scale', { skip: redisSkipReason() }, () => {
  const redis = useRedisStores();

  it('answer every listing, page by page, as the memory store does', async () => {
    const memoryClock = createFakeClock(START);
    const memory = buildMemoryStoreOn(createContext(memoryClock, createIdGenerator(memoryClock)));
    const redisClock = createFakeClock(START);
    const store = await redis.open({ clock: redisClock, ids: createIdGenerator(redisClock) });
    await scenario(memory, memoryClock);
    await scenario(store, redisClock);

    const expected = (await labeller(memory))(await readEverything(memory)) as Record<string, unknown>;
    const actual = (await labeller(store))(await readEverything(store)) as Record<string, unknown>;
    for (const key of Object.keys(expected)) assert.deepEqual(actual[key], expected[key], key);
    const runs = expected['runs'] as unknown[][][];
    assert.equal(runs[0]?.flat().length, RUNS + 1, 'every run listed once');
    assert.equal((expected['publications'] as AuditPage<unknown>[][])[0]?.length, 57, 'fifty-six publications left, one per page, and the page that ends the scan');
    assert.ok((expected['queueStats'] as { queue: string }[]).some((q) => q.queue === 'idle.a'), 'a resumed empty queue is listed');
    assert.ok((runs[1]?.flat().length ?? 0) >= 40, 'cancelled runs span several walks of the index');
    await memory.close();
  });
});
