/**
 * Every store reads a run as the memory store (the reference) does, move by move: the same seeded
 * sequences of job-path and operator moves go through the memory store and the store under test,
 * on clocks that advance alike, and after every move both must read the run (getRun, listRuns,
 * the claimed job's run) the same: status, current stage, last change, end. The conformance suite
 * checks each move alone; this checks them in the orders they meet in. It guards in particular
 * the SQLite store's current stage and last change, derived on read from its jobs (a move to the
 * next stage writes no run row: src/stores/sqlite/sql/run-columns.ts); a derivation that drifts
 * from what the moves write shows up as the first differing move.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createFakeClock, type FakeClock } from '../../src/core/clock.ts';
import { createIdGenerator } from '../../src/core/ids.ts';
import type { Run } from '../../src/core/model.ts';
import type { ClaimedJob, CommitItem, FailureDecision, JobSpec } from '../../src/core/ports/jobs.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { createMemoryStore } from '../../src/stores/memory/index.ts';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { postgresSkipReason } from '../support/postgres-cluster.ts';
import { postgresStoreHarness } from '../support/postgres-stores.ts';
import { redisSkipReason } from '../support/redis-server.ts';
import { redisStoreHarness } from '../support/redis-stores.ts';
import { LEASE_MS, STAGES, failure, leaseOf, rollbackJob, runRequest, stageJob, type StoreHarness } from '../conformance/fixture.ts';
import { createPrng, type Prng } from '../support/simulation/prng.ts';

const SEQUENCES = 60;
const MOVES = 40;

/** One store under test with its own clock; both sides see the same moves. */
interface Side {
  name: string;
  store: Store;
  clock: FakeClock;
  runId: string;
}

/** What the two stores must read alike. */
function view(run: Run | undefined): unknown {
  return run && { status: run.status, currentStage: run.currentStage, updatedAt: run.updatedAt, finishedAt: run.finishedAt };
}

/** The run as getRun and listRuns read it on one side. */
async function readRun(side: Side): Promise<unknown> {
  const detail = await side.store.reads.getRun(side.runId);
  const [listed] = await side.store.reads.listRuns({ limit: 1 });
  assert.deepEqual(view(listed), view(detail?.run), `${side.name}: listRuns reads the run as getRun does`);
  return view(detail?.run);
}

/** The compensation to run after `stage`'s (the stage before it), or none. */
function rollbackBefore(stage: string): JobSpec | null {
  const i = STAGES.indexOf(stage);
  return i > 0 ? rollbackJob(STAGES[i - 1] as string) : null;
}

/** The next stage after `stage`, or none. */
function stageAfter(stage: string): JobSpec | null {
  const next = STAGES[STAGES.indexOf(stage) + 1];
  return next === undefined ? null : stageJob(next);
}

/** A failure decision drawn for a claimed job (compensations never roll back further by decision). */
function drawDecision(prng: Prng, claimed: ClaimedJob): FailureDecision {
  const rollback = claimed.job.kind === 'stage' && prng.chance(0.5) ? rollbackBefore(claimed.job.stage) : null;
  switch (prng.int(4)) {
    case 0:
      return { action: 'retry', delayMs: prng.pick([0, 0, 500]) };
    case 1:
      return { action: 'park' };
    case 2:
      return { action: 'dead_letter', rollback };
    default:
      return { action: 'fail', rollback };
  }
}

/**
 * Claims one claimable job of the run on each side (or none on both), trying the queues in a
 * drawn order: a stage job and a compensation may both be ready (a replayed stage next to a
 * resumed compensation), and either may go first.
 */
async function claimBoth(prng: Prng, sides: readonly Side[]): Promise<ClaimedJob[] | null> {
  const order = [...STAGES].sort(() => prng.next() - 0.5);
  for (const stage of order) {
    const claimed = await Promise.all(sides.map((s) => s.store.jobs.claim([{ queue: `demo.${stage}`, workerId: 'w1', limit: 1, leaseMs: LEASE_MS }])));
    const counts = claimed.map((c) => c.length);
    assert.deepEqual(counts, sides.map(() => counts[0]), `both stores claim alike on demo.${stage}`);
    if (counts[0] === 1) return claimed.map((c) => c[0] as ClaimedJob);
  }
  return null;
}

/** Statuses a run never leaves: the sequence goes on with a new run. */
const ENDED: ReadonlySet<string> = new Set(['succeeded', 'failed', 'cancelled', 'superseded']);

/** Submits a new run on both sides, the one the next moves act on. */
async function submitBoth(sides: readonly Side[], input: number): Promise<void> {
  for (const side of sides) {
    const [submitted] = await side.store.jobs.submit([runRequest({ input: { n: input } })]);
    side.runId = submitted?.run.id as string;
  }
}

/** One move, applied alike to both sides; returns a label for failure messages. */
async function move(prng: Prng, sides: readonly Side[], index: number): Promise<string> {
  const advance = prng.pick([0, 1, 250, 1000]);
  for (const side of sides) await side.clock.advance(advance);
  const current = await sides[0]?.store.reads.getRun(sides[0].runId);
  if (current === null || current === undefined || ENDED.has(current.run.status)) {
    await submitBoth(sides, index);
    return 'new run';
  }
  const roll = prng.int(10);
  if (roll < 7) {
    const claimed = await claimBoth(prng, sides);
    if (claimed === null) return 'nothing to claim';
    const [first] = claimed as [ClaimedJob, ...ClaimedJob[]];
    assert.deepEqual(claimed.map((c) => [c.job.stage, c.job.kind]), claimed.map(() => [first.job.stage, first.job.kind]), 'both claim the same job');
    assert.deepEqual(view(claimed[1]?.run), view(first.run), 'the claimed job carries its run as read');
    const work = prng.between(0, 50);
    for (const side of sides) await side.clock.advance(work);
    if (prng.chance(0.6)) {
      const next = first.job.kind === 'stage' ? stageAfter(first.job.stage) : rollbackBefore(first.job.stage);
      await Promise.all(claimed.map((c, i) => sides[i]?.store.jobs.commit([{ type: 'complete', lease: leaseOf(c), output: { ok: 1 }, durationMs: 5, next }])));
      return `complete ${first.job.kind} ${first.job.stage}`;
    }
    const decision = drawDecision(prng, first);
    await Promise.all(claimed.map((c, i) => sides[i]?.store.jobs.commit([{ type: 'fail', lease: leaseOf(c), error: failure('transient'), durationMs: 5, decision }])));
    return `fail ${first.job.kind} ${first.job.stage}: ${decision.action}`;
  }
  const status = current.run.status;
  if (roll === 7 && status === 'parked') {
    for (const side of sides) await side.store.operator.resumeRun(side.runId);
    return 'resume';
  }
  if (roll === 8) {
    const dead = await Promise.all(sides.map((s) => s.store.reads.listJobs({ runId: s.runId, limit: 10 })));
    const jobs = dead.map((list) => list.find((j) => j.state === 'dead'));
    if (jobs.every((j) => j !== undefined)) {
      const replayed = await Promise.allSettled(jobs.map((j, i) => sides[i]?.store.operator.replayJob(j?.id as string)));
      assert.deepEqual(replayed.map((r) => r.status), replayed.map(() => replayed[0]?.status), 'a replay is refused or taken alike');
      return 'replay';
    }
  }
  if (roll === 9 && prng.chance(0.3)) {
    const cancelled = await Promise.allSettled(sides.map((s) => s.store.operator.cancelRun(s.runId, 'test')));
    assert.deepEqual(cancelled.map((r) => r.status), cancelled.map(() => cancelled[0]?.status), 'a cancel is refused or taken alike');
    return 'cancel';
  }
  return 'wait';
}

/** A migrated memory store and one from `harness`, each on its own fake clock. */
async function openSides(name: string, harness: StoreHarness): Promise<Side[]> {
  const sides: Side[] = [];
  for (const [side, create] of [
    ['memory', async (clock: FakeClock) => createMemoryStore({ clock, ids: createIdGenerator(clock) })],
    [name, (clock: FakeClock) => harness.create({ clock, ids: createIdGenerator(clock) })],
  ] as const) {
    const clock = createFakeClock();
    const store = await create(clock);
    await store.migrate();
    sides.push({ name: side, store, clock, runId: '' });
  }
  return sides;
}

async function closeSides(sides: readonly Side[], harness: StoreHarness): Promise<void> {
  await sides[0]?.store.close();
  if (sides[1]) await harness.destroy(sides[1].store);
}

/** Claims one job of `queue` on each side (their runs read alike), advances both clocks, and commits `item` on each. */
async function stepBoth(sides: readonly Side[], queue: string, item: (claimed: ClaimedJob) => CommitItem): Promise<ClaimedJob[]> {
  const claimed = await Promise.all(sides.map((s) => s.store.jobs.claim([{ queue, workerId: 'w1', limit: 1, leaseMs: LEASE_MS }])));
  assert.deepEqual(claimed.map((c) => c.length), sides.map(() => 1), `one job on ${queue} on each side`);
  assert.deepEqual(view(claimed[1]?.[0]?.run), view(claimed[0]?.[0]?.run), `the job claimed on ${queue} carries its run as read`);
  for (const side of sides) await side.clock.advance(10);
  await Promise.all(claimed.map((c, i) => sides[i]?.store.jobs.commit([item(c[0] as ClaimedJob)])));
  for (const side of sides) await side.clock.advance(10);
  return claimed.map((c) => c[0] as ClaimedJob);
}

/**
 * A resumed compensation: c dead-lettered with compensation b, b parked, the run resumed (which
 * makes b, a compensation, the run's current stage, while c's dead stage job is still there), then
 * b and a completed. After each move both stores read the run alike, and the reference says b.
 */
async function resumedCompensation(name: string, harness: StoreHarness): Promise<void> {
  const sides = await openSides(name, harness);
  const compare = async (after: string): Promise<unknown> => {
    const [reference, tested] = await Promise.all(sides.map(readRun));
    assert.deepEqual(tested, reference, `${name}, after ${after}`);
    return reference;
  };
  try {
    await submitBoth(sides, 0);
    const complete = (next: JobSpec | null) => (c: ClaimedJob): CommitItem => ({ type: 'complete', lease: leaseOf(c), output: { ok: 1 }, durationMs: 5, next });
    const fail = (decision: FailureDecision) => (c: ClaimedJob): CommitItem => ({ type: 'fail', lease: leaseOf(c), error: failure('transient'), durationMs: 5, decision });
    await stepBoth(sides, 'demo.a', complete(stageJob('b')));
    await stepBoth(sides, 'demo.b', complete(stageJob('c')));
    await stepBoth(sides, 'demo.c', fail({ action: 'dead_letter', rollback: rollbackJob('b') }));
    await compare('c dead-lettered');
    await stepBoth(sides, 'demo.b', fail({ action: 'park' }));
    await compare('compensation b parked');
    for (const side of sides) await side.store.operator.resumeRun(side.runId);
    assert.equal(((await compare('the resume')) as { currentStage: string }).currentStage, 'b', 'the resumed compensation is the current stage');
    await stepBoth(sides, 'demo.b', complete(rollbackJob('a')));
    await compare('compensation b completed');
    await stepBoth(sides, 'demo.a', complete(null));
    await compare('compensation a completed');
  } finally {
    await closeSides(sides, harness);
  }
}

/** Runs the sequences on the memory store and on the store `harness` makes. */
async function compareWith(name: string, harness: StoreHarness): Promise<void> {
  for (let seed = 1; seed <= SEQUENCES; seed++) {
    const prng = createPrng(seed);
    const sides = await openSides(name, harness);
    try {
      await submitBoth(sides, 0);
      const done: string[] = [];
      for (let i = 1; i <= MOVES; i++) {
        done.push(await move(prng, sides, i));
        const [reference, tested] = await Promise.all(sides.map(readRun));
        assert.deepEqual(tested, reference, `${name}, seed ${seed}, after: ${done.join(' / ')}`);
      }
    } finally {
      await closeSides(sides, harness);
    }
  }
}

const TITLE = `${SEQUENCES} seeded sequences of ${MOVES} moves (claims, completions, retries, parks, dead letters, failures, compensations, resumes, replays, cancels)`;

const RESUMED = 'a resumed compensation stays the current stage next to the dead stage job it undoes';

describe('run reads match the memory store move by move', () => {
  describe('sqlite', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kiln-run-reads-differential-'));
    let files = 0;
    const harness: StoreHarness = {
      create: async ({ clock, ids }) => createSqliteStore({ path: join(dir, `${files++}.db`), clock, ids }),
      destroy: (store) => store.close(),
    };
    after(() => rmSync(dir, { recursive: true, force: true }));
    it(`sqlite: ${TITLE}`, () => compareWith('sqlite', harness));
    it(`sqlite: ${RESUMED}`, () => resumedCompensation('sqlite', harness));
  });

  describe('postgres', { skip: postgresSkipReason() }, () => {
    const harness = postgresStoreHarness();
    after(() => harness.end());
    it(`postgres: ${TITLE}`, () => compareWith('postgres', harness));
    it(`postgres: ${RESUMED}`, () => resumedCompensation('postgres', harness));
  });

  describe('redis', { skip: redisSkipReason() }, () => {
    const harness = redisStoreHarness();
    after(() => harness.end());
    it(`redis: ${TITLE}`, () => compareWith('redis', harness));
    it(`redis: ${RESUMED}`, () => resumedCompensation('redis', harness));
  });
});
