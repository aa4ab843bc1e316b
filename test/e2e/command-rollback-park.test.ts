/**
 * A compensation that keeps failing, with real processes: `kiln serve` (API and worker) runs a
 * pipeline declared in kiln.yaml whose stage b fails for good and whose stage a's rollback command
 * fails on every attempt. The run parks (visible: status, the parked rollback job with its error),
 * `kiln_rollback_failures_total` rises, and once the cause is fixed a resume runs the rollback
 * again and the run ends failed. On SQLite and on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { cleanEnv, waitUntil } from './kiln-process.ts';
import { scrapeMetricSum, startServe } from './qr-serve.ts';
import { openE2eScene, qrE2eStoreCases, type QrE2eStoreCase } from './qr-stores.ts';

const FIXTURES = fileURLToPath(new URL('../fixtures/commands/', import.meta.url));
const STEP_TIMEOUT_MS = 30_000;

const KILN_YAML = (dir: string): string => `
worker:
  pollMs: 50
  reapMs: 200
pipelines:
  t.park:
    stages:
      - name: a
        run: /bin/true
        rollback: [${FIXTURES}fail-unless.sh, ${dir}/undo-allowed]
        retry: { retries: 1, backoff: 0 }
      - name: b
        run: [${FIXTURES}exit-with.sh, "65"]
`;

interface RunView {
  status: string;
  error: { code: string } | null;
  stages: { stage: string; status: string; rollbackStatus: string | null }[];
}

const { sqlite, postgres } = qrE2eStoreCases();

for (const storeCase of [sqlite, postgres] as QrE2eStoreCase[]) describe(`${storeCase.name}: a rollback that always fails`, { skip: storeCase.skip }, () => {
  test('parks the run and raises kiln_rollback_failures_total; resumed after the fix, the rollback runs and the run ends failed', { timeout: 90_000 }, async (t) => {
    const { dir, store, procs } = await openE2eScene(t, storeCase, 'kiln-cmd-park-');
    await writeFile(join(dir, 'kiln.yaml'), KILN_YAML(dir));
    const api = await startServe([...store.args], dir, cleanEnv({ ...store.env, KILN_LOG_LEVEL: 'warn' }));
    procs.push(api.proc);
    const submitted = await fetch(`${api.base}/v1/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pipeline: 't.park', input: {} }) });
    assert.equal(submitted.status, 202, await submitted.clone().text());
    const { id } = (await submitted.json()) as { id: string };
    const runIn = (status: string) => async (): Promise<RunView | undefined> => {
      const run = (await (await fetch(`${api.base}/v1/runs/${id}`)).json()) as RunView;
      return run.status === status ? run : undefined;
    };

    const parked = await waitUntil('the run to park', runIn('parked'), STEP_TIMEOUT_MS).catch((err: unknown) => assert.fail(`${String(err)}\n${api.proc.output()}`));
    assert.equal(parked.error?.code, 'COMMAND_FAILED', 'the run keeps the error of stage b');
    assert.deepEqual(parked.stages.map((s) => [s.stage, s.status, s.rollbackStatus]), [
      ['a', 'succeeded', 'pending'],
      ['b', 'failed', null],
    ]);
    const [job] = await store.store.reads.listJobs({ runId: id, state: 'parked', limit: 10 });
    assert.equal(job?.kind, 'rollback');
    assert.equal(job?.attempt, 2, 'the rollback had its retry');
    assert.match(job?.lastError?.message ?? '', /fail-unless\.sh exited with code 1: cannot undo/);
    assert.equal(await scrapeMetricSum([api.base], 'kiln_rollback_failures_total', { pipeline: 't.park', stage: 'a' }), 1);

    await writeFile(join(dir, 'undo-allowed'), '');
    const resumed = await fetch(`${api.base}/v1/runs/${id}/resume`, { method: 'POST' });
    assert.equal(resumed.status, 200, await resumed.clone().text());
    const ended = await waitUntil('the run to end failed', runIn('failed'), STEP_TIMEOUT_MS);
    assert.deepEqual(ended.stages.map((s) => s.rollbackStatus), ['succeeded', null]);
    assert.equal(await scrapeMetricSum([api.base], 'kiln_rollback_failures_total', { pipeline: 't.park', stage: 'a' }), 1);
  });
});
