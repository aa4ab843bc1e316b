/**
 * Several processes sharing one SQLite file, as `kiln serve` and `kiln worker` processes do:
 * concurrent migrations apply once, concurrent claimers never take a job twice, concurrent
 * cache callers build each entry once (single-flight), and version counters never repeat.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { contentHash } from '../../src/core/canonical.ts';
import type { MigrationResult } from '../../src/core/ports/store.ts';

const CHILD = fileURLToPath(new URL('./sqlite-multiprocess-child.ts', import.meta.url));

/** A spawned child with its stdout lines as an async queue. */
interface Child {
  proc: ChildProcessWithoutNullStreams;
  nextLine(): Promise<string>;
  exited: Promise<number | null>;
}

function spawnChild(args: string[]): Child {
  const proc = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  return {
    proc,
    exited,
    async nextLine() {
      const line = await lines.next();
      if (line.done) throw new Error(`child ${args.join(' ')} ended early (exit ${String(await exited)}): ${stderr}`);
      return line.value;
    },
  };
}

/** Spawns children, waits until all are ready, then releases them at the same moment. */
async function startTogether(argsList: string[][]): Promise<Child[]> {
  const children = argsList.map(spawnChild);
  for (const child of children) assert.equal(await child.nextLine(), 'ready');
  for (const child of children) child.proc.stdin.write('go\n');
  return children;
}

async function finish(child: Child): Promise<unknown> {
  const result: unknown = JSON.parse(await child.nextLine());
  assert.equal(await child.exited, 0);
  return result;
}

describe('sqlite store shared by several processes', () => {
  let dir = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'kiln-sqlite-multiprocess-'));
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('two processes migrating a new file at the same moment both succeed and the migrations apply once', async () => {
    const path = join(dir, 'migrate.db');
    const children = await startTogether([
      ['migrate', path],
      ['migrate', path],
    ]);
    const results = (await Promise.all(children.map(finish))) as MigrationResult[];

    const store = createSqliteStore({ path });
    try {
      const latest = (await store.migrate()).version;
      assert.deepEqual(await store.migrate(), { applied: [], version: latest });
      assert.ok(results.every((r) => r.version === latest));
      const applied = results.map((r) => r.applied).sort((a, b) => a.length - b.length);
      assert.deepEqual(applied[0], [], 'the second migrator applies nothing');
      assert.deepEqual(applied[1], Array.from({ length: latest }, (_, i) => i + 1), 'the first applies every version once');
    } finally {
      await store.close();
    }
  });

  it('four processes claiming from one queue of 400 jobs claim and complete every job exactly once', async () => {
    const path = join(dir, 'claim.db');
    const queue = 'mp.work';
    const store = createSqliteStore({ path });
    try {
      await store.migrate();
      await store.jobs.submit(
        Array.from({ length: 400 }, (_, n) => ({
          pipeline: 'mp',
          pipelineVersion: 1,
          input: { n },
          inputChecksum: contentHash({ n }),
          stages: ['work'],
          firstJob: { stage: 'work', queue, kind: 'stage', maxAttempts: 3, priority: 0 },
        })),
      );

      const children = await startTogether([1, 2, 3, 4].map((i) => ['work', path, queue, `worker-${i}`]));
      const reports = (await Promise.all(children.map(finish))) as { workerId: string; claimed: string[] }[];

      const claimed = reports.flatMap((r) => r.claimed);
      assert.equal(claimed.length, 400, 'every claim was of a distinct job');
      assert.equal(new Set(claimed).size, 400, 'no job was claimed twice');
      const runs = await store.reads.listRuns({ pipeline: 'mp', limit: 1000 });
      assert.equal(runs.length, 400);
      assert.ok(runs.every((r) => r.status === 'succeeded'));
      let ledgerEntries = 0;
      for (const run of runs) {
        const ledger = await store.reads.readLedger(run.id);
        assert.equal(ledger.length, 1, `run ${run.id} has exactly one ledger entry`);
        ledgerEntries += ledger.length;
      }
      assert.equal(ledgerEntries, 400);
      assert.deepEqual(await store.reads.listJobs({ queue, limit: 10 }), [], 'the queue has no jobs left');
    } finally {
      await store.close();
    }
  });

  it('two processes racing for the same 200 cache keys build each key exactly once, each with its own fence', async () => {
    const path = join(dir, 'cache.db');
    const cache = 'mp.render';
    const keys = Array.from({ length: 200 }, (_, i) => `key-${i}`);
    const store = createSqliteStore({ path });
    try {
      await store.migrate();
      const children = await startTogether([1, 2].map((i) => ['cache', path, cache, `builder-${i}`, String(keys.length)]));
      const reports = (await Promise.all(children.map(finish))) as { workerId: string; builds: { key: string; fence: number }[] }[];

      const builds = reports.flatMap((r) => r.builds.map((b) => ({ ...b, workerId: r.workerId })));
      assert.deepEqual(builds.map((b) => b.key).sort(), [...keys].sort(), 'every key was built once, by one process');
      assert.equal(new Set(builds.map((b) => b.fence)).size, keys.length, 'every build got its own fence');
      for (const build of builds) {
        const entry = await store.cache.get(cache, build.key);
        assert.equal(entry?.status, 'ready');
        assert.deepEqual(entry?.value, { builder: build.workerId }, `${build.key} holds the value of the process that built it`);
      }
    } finally {
      await store.close();
    }
  });

  it('three processes allocating versions of one counter at once get every value from 1 to 150 exactly once', async () => {
    const path = join(dir, 'versions.db');
    const store = createSqliteStore({ path });
    try {
      await store.migrate();
      const children = await startTogether([1, 2, 3].map((i) => ['versions', path, 'assets', `uploader-${i}`, '50']));
      const reports = (await Promise.all(children.map(finish))) as { versions: number[] }[];
      for (const { versions } of reports) assert.deepEqual(versions, [...versions].sort((a, b) => a - b), 'each process sees its values rise');
      const all = reports.flatMap((r) => r.versions).sort((a, b) => a - b);
      assert.deepEqual(all, Array.from({ length: 150 }, (_, i) => i + 1));
      assert.equal(await store.versions.allocate('assets', 'shared'), 151);
    } finally {
      await store.close();
    }
  });
});
