/**
 * deploy/ against the real thing: Debian's `prometheus` server (127.0.0.1, a temp storage dir, a
 * 1 s scrape interval, kiln's alerting rules loaded) scrapes a live `kiln serve` while a mixed
 * load runs through it: successes, retries, dead letters, parked and failed runs, timeouts, a
 * failing rollback, tenants, duplicate submissions and QR renders (cache and publications).
 * Then every PromQL expression of the Grafana board, the rules and the autoscaling example runs
 * on Prometheus's HTTP API: each parses and evaluates, every panel of the board returns data, and
 * every rule evaluates without error.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { allQueries, boardPanels, DEPLOY_FILES } from '../support/deploy-queries.ts';
import { cleanEnv, freePort, KILN_INDEX, killIfRunning, spawnKiln, waitUntil } from './kiln-process.ts';

const PROMETHEUS_MISSING = spawnSync('prometheus', ['--version']).error ? 'prometheus not installed (apt-get install prometheus)' : undefined;
const E2E_TIMEOUT_MS = 150_000;
/** How long the load runs while Prometheus scrapes. */
const LOAD_MS = 12_000;

/** A pipeline whose run fails permanently after a stage whose rollback fails too. */
const LOAD_PIPELINE = `import { definePipeline, StageFailure } from ${JSON.stringify(pathToFileURL(KILN_INDEX).href)};
export default definePipeline({
  name: 'load.rollback',
  version: 1,
  stages: [
    { name: 'reserve', handler: () => ({ reserved: true }), rollback: () => { throw StageFailure.permanent('cannot release', { code: 'RELEASE_FAILED' }); } },
    { name: 'charge', handler: () => { throw StageFailure.permanent('declined', { code: 'DECLINED' }); } },
  ],
});
`;

/** Quick retries, and a `finish` stage that times out when the input sleeps long. */
const KILN_YAML = `pipelines:
  demo.sleep:
    defaults: { maxAttempts: 2, interventionAttempts: 1, backoff: { baseMs: 10ms, capMs: 20ms } }
    stages:
      finish: { timeoutMs: 100ms }
`;

interface PromResult {
  status: 'success' | 'error';
  error?: string;
  data?: { resultType: string; result: unknown[] };
}

async function promQuery(base: string, expr: string): Promise<PromResult> {
  const res = await fetch(`${base}/api/v1/query?${new URLSearchParams({ query: expr })}`);
  return (await res.json()) as PromResult;
}

async function post(base: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<number> {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  await res.arrayBuffer();
  return res.status;
}

/** One round of the mixed load. */
async function loadRound(base: string, round: number): Promise<void> {
  const demo = (input: Record<string, unknown>, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    post(base, '/v1/runs', { pipeline: 'demo.sleep', input, ...extra }, headers);
  await Promise.all([
    demo({ delayMs: 5 }),
    demo({ delayMs: 5 }, { tenant: round % 2 === 0 ? 'acme' : 'globex' }),
    // The same key twice: the second is a dedup hit.
    demo({ delayMs: 1 }, {}, { 'idempotency-key': `load-${round}` }),
    demo({ delayMs: 1 }, {}, { 'idempotency-key': `load-${round}` }),
    demo({ delayMs: 1, failAt: 'process', failWith: 'retryable' }),
    demo({ delayMs: 1, failAt: 'prepare', failWith: 'intervention' }),
    demo({ delayMs: 1, failAt: 'finish', failWith: 'permanent' }),
    // Sleeps past finish's 100 ms timeout.
    round % 3 === 0 ? demo({ delayMs: 150 }) : Promise.resolve(202),
    post(base, '/v1/runs', { pipeline: 'load.rollback', input: {} }),
    // A new QR every other round (a cache miss), the same one otherwise (a hit).
    post(base, '/v1/qr', { content: `load ${Math.floor(round / 2)}`, size: 64, wait: 0 }),
  ]);
}

function spawnPrometheus(configFile: string, dataDir: string, port: number): { child: ChildProcess; output: () => string } {
  const child = spawn('prometheus', [`--config.file=${configFile}`, `--storage.tsdb.path=${dataDir}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  return { child, output: () => out };
}

test('a live Prometheus scraping kiln under load evaluates every expression of deploy/, and the board\'s panels return data', { timeout: E2E_TIMEOUT_MS, skip: PROMETHEUS_MISSING }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-prometheus-'));
  await writeFile(join(dir, 'load.mts'), LOAD_PIPELINE);
  await writeFile(join(dir, 'kiln.yaml'), KILN_YAML);
  const kilnPort = await freePort();
  const serve = spawnKiln(['serve', '--port', String(kilnPort), '--db', join(dir, 'kiln.db'), '--pipelines', './load.mts', '--log-level', 'warn'], dir, cleanEnv());
  const promPort = await freePort();
  await writeFile(
    join(dir, 'prometheus.yml'),
    `global: { scrape_interval: 1s, evaluation_interval: 1s }
rule_files: [${JSON.stringify(DEPLOY_FILES.rules)}]
scrape_configs:
  - job_name: kiln
    static_configs: [{ targets: ['127.0.0.1:${kilnPort}'] }]
`,
  );
  const prometheus = spawnPrometheus(join(dir, 'prometheus.yml'), join(dir, 'prometheus-data'), promPort);
  t.after(async () => {
    killIfRunning(serve);
    prometheus.child.kill('SIGKILL');
    await serve.exited;
    await rm(dir, { recursive: true, force: true });
  });
  const kiln = `http://127.0.0.1:${kilnPort}`;
  const prom = `http://127.0.0.1:${promPort}`;
  await waitUntil('kiln /healthz', async () => ((await fetch(`${kiln}/healthz`)).ok ? true : undefined), 20_000, 100).catch((err: unknown) => {
    throw new Error(`${String(err)}\n${serve.output()}`);
  });
  await waitUntil('Prometheus to scrape kiln', async () => ((await promQuery(prom, 'up{job="kiln"} == 1')).data?.result.length ? true : undefined), 30_000, 250).catch(
    (err: unknown) => {
      throw new Error(`${String(err)}\n${prometheus.output()}`);
    },
  );

  const loadUntil = Date.now() + LOAD_MS;
  for (let round = 0; Date.now() < loadUntil; round++) await loadRound(kiln, round);
  // The last rounds' runs finish and Prometheus scrapes them; rates need two samples in the window.
  await waitUntil('a failed rollback to be scraped', async () => ((await promQuery(prom, 'sum(kiln_rollback_failures_total) > 0')).data?.result.length ? true : undefined), 20_000, 250);
  await new Promise((resolve) => setTimeout(resolve, 2_000));

  const failures: string[] = [];
  for (const { source, expr } of allQueries()) {
    const answer = await promQuery(prom, expr.replace(/\$\{?\w+\}?/g, '30s'));
    if (answer.status !== 'success') failures.push(`${source}: ${expr}: ${answer.error}`);
  }
  assert.deepEqual(failures, [], 'every expression parses and evaluates');

  const empty: string[] = [];
  for (const panel of boardPanels()) {
    const results = await Promise.all(panel.exprs.map((expr) => promQuery(prom, expr)));
    if (!results.some((r) => (r.data?.result.length ?? 0) > 0)) empty.push(`${panel.title}: ${panel.exprs.join(' | ')}`);
  }
  assert.deepEqual(empty, [], 'every panel of the board returns data');

  const rules = (await (await fetch(`${prom}/api/v1/rules`)).json()) as { data: { groups: { rules: { name: string; health: string; lastError?: string }[] }[] } };
  const loaded = rules.data.groups.flatMap((g) => g.rules);
  assert.equal(loaded.length, allQueries().filter((q) => q.source.startsWith('alert ')).length, 'Prometheus loaded every rule');
  assert.deepEqual(loaded.filter((r) => r.health === 'err').map((r) => `${r.name}: ${r.lastError}`), []);
  // The load dead-letters, parks and rolls back on purpose: those alerts are at least pending.
  const alerts = (await (await fetch(`${prom}/api/v1/alerts`)).json()) as { data: { alerts: { labels: { alertname: string } }[] } };
  const active = new Set(alerts.data.alerts.map((a) => a.labels.alertname));
  for (const name of ['KilnJobsDeadLettered', 'KilnRollbackFailed']) assert.ok(active.has(name), `${name} is active; active: ${[...active].join(', ')}`);
});
