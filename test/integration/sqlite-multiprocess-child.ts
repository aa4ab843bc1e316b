/**
 * Child process of `sqlite-multiprocess.test.ts`. Opens the SQLite store on a shared file,
 * prints `ready`, waits for `go` on stdin (so siblings start together), then either migrates
 * (`migrate <db>`), claims and completes jobs of one queue until none is left
 * (`work <db> <queue> <workerId>`), or races for cache entries `key-0..key-<n-1>` of one cache
 * and completes the builds it is given (`cache <db> <cache> <workerId> <n>`), or allocates n
 * versions of one counter (`versions <db> <scope> <workerId> <n>`).
 * Prints one JSON line with what it did.
 */
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { PipelineError } from '../../src/core/errors.ts';
import type { CommitItem } from '../../src/core/ports/jobs.ts';
import type { Store } from '../../src/core/ports/store.ts';

const [mode, dbPath, queue = '', workerId = '', keyCount = '0'] = process.argv.slice(2);
if (dbPath === undefined) throw new Error('usage: sqlite-multiprocess-child.ts migrate|work|cache|versions <db> [queue|cache|scope workerId [n]]');

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

async function work(store: Store): Promise<string[]> {
  const claimedIds: string[] = [];
  for (;;) {
    const claimed = await retrying(() => store.jobs.claim([{ queue, workerId, limit: 5, leaseMs: 60_000 }]));
    // Nothing is ever added to the queue and leases never expire here, so empty means done.
    if (claimed.length === 0) return claimedIds;
    // The whole claimed batch commits in one transaction (group commit), as the engine does.
    const items = claimed.map(({ job }): CommitItem => {
      claimedIds.push(job.id);
      const lease = { jobId: job.id, token: job.leaseToken ?? '' };
      return { type: 'complete', lease, output: { workerId }, durationMs: 0, next: null };
    });
    const results = await retrying(() => store.jobs.commit(items));
    results.forEach((result, i) => {
      if (result.outcome !== 'committed') throw new Error(`commit of ${claimed[i]?.job.id} refused: ${result.outcome}`);
    });
  }
}

/** A build this process was given: the key and the builder fence it got. */
interface Build {
  key: string;
  fence: number | null;
}

/** Sweeps over all keys; builds are completed only after the last, so every sweep races for them. */
const CACHE_SWEEPS = 10;

/**
 * Sweeps the keys with `cache.acquire` {@link CACHE_SWEEPS} times, in the same order as the
 * sibling (so both ask for each key at about the same moment, again and again while it is being
 * built), then completes the builds this process was given.
 */
async function hammerCache(store: Store): Promise<Build[]> {
  const cache = queue;
  const keys = Array.from({ length: Number(keyCount) }, (_, i) => `key-${i}`);
  const builds: Build[] = [];
  for (let sweep = 0; sweep < CACHE_SWEEPS; sweep++) {
    for (const key of keys) {
      const token = `${workerId}:${key}`;
      const result = await retrying(() => store.cache.acquire({ cache, key, owner: workerId, token, leaseMs: 60_000 }));
      if (result.state === 'build') builds.push({ key, fence: result.entry.builderFence });
    }
  }
  for (const { key } of builds) {
    const token = `${workerId}:${key}`;
    const completion = { cache, key, token, value: { builder: workerId }, ttlMs: 600_000, staleMs: 0 };
    const stored = await retrying(() => store.cache.complete(completion));
    if (!stored) throw new Error(`build of ${key} was taken over`);
  }
  return builds;
}

/** Allocates `keyCount` versions of the counter `(queue, 'shared')`, one call at a time. */
async function allocateVersions(store: Store): Promise<number[]> {
  const versions: number[] = [];
  for (let i = 0; i < Number(keyCount); i++) versions.push(await retrying(() => store.versions.allocate(queue, 'shared')));
  return versions;
}

const store = createSqliteStore({ path: dbPath });
try {
  await waitForGo();
  if (mode === 'migrate') {
    process.stdout.write(`${JSON.stringify(await store.migrate())}\n`);
  } else if (mode === 'versions') {
    process.stdout.write(`${JSON.stringify({ workerId, versions: await allocateVersions(store) })}\n`);
  } else if (mode === 'cache') {
    process.stdout.write(`${JSON.stringify({ workerId, builds: await hammerCache(store) })}\n`);
  } else {
    process.stdout.write(`${JSON.stringify({ workerId, claimed: await work(store) })}\n`);
  }
} finally {
  await store.close();
}
