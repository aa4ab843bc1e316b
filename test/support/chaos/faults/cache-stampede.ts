/**
 * Many cache entries expiring at once: KEYS keys built together with one TTL, then looked up by
 * two caches on two connections to the scenario's store (two processes, as far as the store can
 * tell) every STEP_MS until each has expired and been rebuilt. Counted: builds of a key that
 * overlapped another of the same key, or that began before the value built just before could
 * have expired (both duplicates: single flight broken); lookups that failed (lost); entries left
 * `building` (stuck); and how the rebuilds spread over time (the TTL jitter's doing).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock, type Clock } from '../../../../src/core/clock.ts';
import { createIdGenerator } from '../../../../src/core/ids.ts';
import { createSingleFlightCache } from '../../../../src/engine/single-flight-cache.ts';
import { createRecorder } from '../../engine-harness.ts';
import { createPrng } from '../../simulation/prng.ts';
import type { FaultReport, FaultScenario } from './index.ts';
import { sleep } from './fault-runs.ts';
import { openFaultStore } from './fault-stores.ts';

const KEYS = 60;
const TTL_MS = 1_500;
const JITTER = 0.4;
const STEP_MS = 100;
/** Lookups go on this long after the first build: every key expires at least once by TTL_MS. */
const OBSERVE_MS = TTL_MS + 4 * STEP_MS;
/** Clock granularity between this process and the store. */
const EPSILON_MS = 5;
const CACHE = 'fault-stampede';

/** One build of a key: when it began and ended. */
export interface Build {
  key: string;
  startedAt: number;
  endedAt: number;
}

/** Build functions that record each build and count those that overlapped another of the same key. */
export function createBuildLog(clock: Pick<Clock, 'now' | 'sleep'>, buildMs: number): { builds: Build[]; overlapping(): number; build(key: string): () => Promise<string> } {
  const builds: Build[] = [];
  const building = new Set<string>();
  let overlapping = 0;
  return {
    builds,
    overlapping: () => overlapping,
    build: (key) => async () => {
      if (building.has(key)) overlapping += 1;
      building.add(key);
      const startedAt = clock.now();
      await clock.sleep(buildMs);
      building.delete(key);
      builds.push({ key, startedAt, endedAt: clock.now() });
      return `${key}@${startedAt}`;
    },
  };
}

export const cacheStampedeScenario: FaultScenario = {
  name: 'cache-stampede',
  async run({ seed, store: kind, log }): Promise<FaultReport> {
    const dir = await mkdtemp(join(tmpdir(), 'kiln-fault-stampede-'));
    const faultStore = await openFaultStore(kind, dir);
    const stores = [faultStore.connect(), faultStore.connect()];
    try {
      const recorder = createRecorder();
      const caches = stores.map((store, i) =>
        createSingleFlightCache({
          store,
          clock: systemClock,
          ids: createIdGenerator(systemClock),
          observer: recorder.observer,
          random: createPrng(seed * 2 + i).next,
          owner: `stampede-${i}`,
        }),
      );
      const { builds, overlapping, build } = createBuildLog(systemClock, 10);
      const keys = Array.from({ length: KEYS }, (_, i) => `key-${seed}-${i}`);
      let lookups = 0;
      let failed = 0;
      const lookAll = async (): Promise<void> => {
        const all = keys.flatMap((key) => caches.map((cache) => cache.getOrBuild({ cache: CACHE, key, ttlMs: TTL_MS, jitterRatio: JITTER }, build(key))));
        lookups += all.length;
        failed += (await Promise.allSettled(all)).filter((r) => r.status === 'rejected').length;
      };
      log(`cache-stampede: ${KEYS} keys, TTL ${TTL_MS} ms with jitter ${JITTER}, looked up by two caches every ${STEP_MS} ms for ${OBSERVE_MS} ms`);
      await lookAll();
      const start = Date.now();
      while (Date.now() - start < OBSERVE_MS) {
        const next = Date.now() + STEP_MS;
        await lookAll();
        await sleep(Math.max(0, next - Date.now()));
      }
      const stuck = (await stores[0]!.cache.list({ cache: CACHE, status: 'building', limit: 1_000 })).length;

      // A build is a duplicate if the value built before it could not have expired yet.
      let early = 0;
      const rebuildStarts: number[] = [];
      const byKey = new Map<string, Build[]>();
      for (const b of builds) byKey.set(b.key, [...(byKey.get(b.key) ?? []), b]);
      for (const list of byKey.values()) {
        list.sort((a, b) => a.startedAt - b.startedAt);
        for (let i = 1; i < list.length; i++) {
          if (list[i]!.startedAt + EPSILON_MS < list[i - 1]!.endedAt + TTL_MS * (1 - JITTER)) early += 1;
          if (i === 1) rebuildStarts.push(list[i]!.startedAt - list[0]!.endedAt);
        }
      }
      const perStep = new Map<number, number>();
      for (const at of rebuildStarts) perStep.set(Math.floor(at / STEP_MS), (perStep.get(Math.floor(at / STEP_MS)) ?? 0) + 1);
      log(`cache-stampede: ${builds.length} builds for ${KEYS} keys, ${rebuildStarts.length} rebuilt, in ${perStep.size} steps of ${STEP_MS} ms`);
      return {
        name: 'cache-stampede',
        runs: KEYS,
        lost: failed,
        duplicated: overlapping() + early,
        duplicatePublications: 0,
        stuck,
        details: {
          lookups,
          builds: builds.length,
          keysRebuilt: rebuildStarts.length,
          overlappingBuilds: overlapping(),
          buildsBeforeExpiry: early,
          rebuildStepsUsed: perStep.size,
          mostRebuildsInOneStep: Math.max(0, ...perStep.values()),
          firstRebuildAfterMs: rebuildStarts.length ? Math.min(...rebuildStarts) : -1,
          lastRebuildAfterMs: rebuildStarts.length ? Math.max(...rebuildStarts) : -1,
        },
      };
    } finally {
      for (const store of stores) await store.close();
      await faultStore.destroy();
      await rm(dir, { recursive: true, force: true });
    }
  },
};
