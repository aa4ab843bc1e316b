/**
 * Many cache entries expiring at once: N keys built together with the same TTL, then looked up
 * by two caches on two connections to one SQLite file (two processes, as far as the store can
 * tell) at every step of a fake clock until each has expired once. Each key is rebuilt exactly
 * once (the store hands one builder lease per key across both), never by two builders at once,
 * and the TTL jitter spreads the rebuilds over the jitter window instead of one step; without
 * jitter they all land in one step (the control that shows the spread is the jitter's doing).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { SingleFlightCache } from '../../src/core/cache.ts';
import { createFakeClock, type FakeClock } from '../../src/core/clock.ts';
import { createIdGenerator } from '../../src/core/ids.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { createSingleFlightCache } from '../../src/engine/single-flight-cache.ts';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { createRecorder } from '../support/engine-harness.ts';
import { createBuildLog, type Build } from '../support/chaos/faults/cache-stampede.ts';
import { createPrng } from '../support/simulation/prng.ts';

const KEYS = 50;
const TTL_MS = 10_000;
const STEP_MS = 250;
/**
 * First expiries fall in [TTL * (1 - JITTER), TTL]; a rebuilt entry lives at least TTL * (1 - JITTER)
 * again, so up to TTL + STEP each key expires exactly once.
 */
const JITTER = 0.4;

const dirs: string[] = [];
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** Two caches on two connections to one new SQLite file, on one fake clock, with seeded jitter. */
async function openTwoCaches(clock: FakeClock): Promise<{ caches: SingleFlightCache[]; stores: Store[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'kiln-stampede-'));
  dirs.push(dir);
  const stores = [0, 1].map(() => createSqliteStore({ path: join(dir, 'kiln.db'), clock }));
  await stores[0]!.migrate();
  const caches = stores.map((store, i) =>
    createSingleFlightCache({ store, clock, ids: createIdGenerator(clock), observer: createRecorder().observer, random: createPrng(i + 1).next, owner: `process-${i}` }),
  );
  return { caches, stores };
}

/** Awaits `promises`, moving the fake clock 1 ms at a time meanwhile (waiters poll on it). */
async function settle(clock: FakeClock, promises: Promise<unknown>[]): Promise<void> {
  let done = false;
  const all = Promise.all(promises).finally(() => (done = true));
  while (!done) {
    await new Promise((resolve) => setImmediate(resolve));
    if (!done) await clock.advance(1);
  }
  await all;
}

/**
 * Builds every key once, then looks every key up from both caches at each step up to TTL + STEP;
 * returns every build, and how many builds of one key overlapped.
 */
async function stampede(jitterRatio: number): Promise<{ builds: Build[]; overlapping: number; start: number }> {
  const clock = createFakeClock();
  const { caches, stores } = await openTwoCaches(clock);
  const { builds, overlapping, build } = createBuildLog(clock, 2);
  const keys = Array.from({ length: KEYS }, (_, i) => `key-${i}`);
  const lookAll = (): Promise<void> =>
    settle(
      clock,
      keys.flatMap((key) => caches.map((cache) => cache.getOrBuild({ cache: 'stampede', key, ttlMs: TTL_MS, jitterRatio }, build(key)))),
    );
  const start = clock.now();
  try {
    await lookAll();
    for (let step = 1; step * STEP_MS <= TTL_MS + STEP_MS; step++) {
      clock.set(start + step * STEP_MS);
      await lookAll();
    }
  } finally {
    for (const store of stores) await store.close();
  }
  return { builds, overlapping: overlapping(), start };
}

/** The step (since `start`) each rebuild began in, by step. */
function rebuildsByStep(builds: Build[], start: number): Map<number, number> {
  const seen = new Set<string>();
  const steps = new Map<number, number>();
  for (const b of builds) {
    if (!seen.has(b.key)) {
      seen.add(b.key);
      continue;
    }
    const step = Math.floor((b.startedAt - start) / STEP_MS);
    steps.set(step, (steps.get(step) ?? 0) + 1);
  }
  return steps;
}

describe('cache stampede: many entries expiring at once', () => {
  test(`${KEYS} keys with one TTL, looked up by two caches on two connections: one build per key per expiry, rebuilds spread by the jitter`, async () => {
    const { builds, overlapping, start } = await stampede(JITTER);
    assert.equal(overlapping, 0, 'no key was built by two builders at once');
    const perKey = new Map<string, number>();
    for (const b of builds) perKey.set(b.key, (perKey.get(b.key) ?? 0) + 1);
    assert.equal(perKey.size, KEYS);
    assert.deepEqual([...new Set(perKey.values())], [2], 'each key built once, then rebuilt once after its one expiry');
    const steps = rebuildsByStep(builds, start);
    const earliest = Math.min(...steps.keys()) * STEP_MS;
    const latest = Math.max(...steps.keys()) * STEP_MS;
    // Every rebuild within the jitter window [TTL * (1 - JITTER), TTL] (plus the step it was seen in).
    assert.ok(earliest >= TTL_MS * (1 - JITTER) - STEP_MS && latest <= TTL_MS, `rebuilds from ${earliest} to ${latest} ms`);
    // Spread over the window's 16 steps: no step takes more than a fifth of the keys.
    assert.ok(steps.size >= 8, `rebuilds in ${steps.size} distinct steps`);
    assert.ok(Math.max(...steps.values()) <= KEYS / 5, `at most ${Math.max(...steps.values())} rebuilds in one step`);
  });

  test('without jitter every rebuild lands in the same step (the control)', async () => {
    const { builds, overlapping, start } = await stampede(0);
    assert.equal(overlapping, 0);
    const steps = rebuildsByStep(builds, start);
    assert.deepEqual([...steps.values()], [KEYS]);
  });
});
