/**
 * deploy/ as files: the alerting rules pass `promtool check rules` and their unit tests
 * (`promtool test rules`), the example Prometheus configuration passes `promtool check config`,
 * and the Grafana board and the autoscaling example read kiln's own metrics only, every one of
 * which kiln serves. (test/e2e/prometheus-deploy.test.ts runs every expression against a live
 * Prometheus scraping kiln.)
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { createMetrics } from '../../src/observe/metrics.ts';
import { allQueries, autoscalingQueries, boardPanels, DEPLOY_FILES, metricNamesOf, readBoard } from '../support/deploy-queries.ts';

const PROMTOOL_MISSING = spawnSync('promtool', ['--version']).error ? 'promtool not installed (apt-get install prometheus)' : undefined;

function promtool(...args: string[]): { status: number | null; output: string } {
  const result = spawnSync('promtool', args, { encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** Every metric family kiln's /metrics can serve (histograms with their series suffixes). */
async function servedMetricNames(): Promise<Set<string>> {
  const metrics = createMetrics({ queueStats: async () => [] });
  metrics.setWorkerSlots(() => []);
  const names = new Set<string>();
  for (const metric of await metrics.registry.getMetricsAsJSON()) {
    names.add(metric.name);
    if (String(metric.type) === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${metric.name}${suffix}`);
  }
  return names;
}

describe('deploy/ with promtool', { skip: PROMTOOL_MISSING }, () => {
  test('promtool check rules accepts the alerting rules', () => {
    const { status, output } = promtool('check', 'rules', DEPLOY_FILES.rules);
    assert.equal(status, 0, output);
    assert.match(output, /SUCCESS: \d+ rules found/);
  });

  test('promtool test rules: every alert fires on its series and stays quiet on a healthy kiln', () => {
    const { status, output } = promtool('test', 'rules', DEPLOY_FILES.ruleTests);
    assert.equal(status, 0, output);
    assert.match(output, /SUCCESS/);
  });

  test('promtool check config accepts the example Prometheus configuration (and its rule file)', () => {
    const { status, output } = promtool('check', 'config', DEPLOY_FILES.prometheusConfig);
    assert.equal(status, 0, output);
  });
});

describe('deploy/ contents', () => {
  test('every alert named in the rules has a unit test, and every rule carries a severity and a summary', async () => {
    const { parse } = await import('yaml');
    const { readFileSync } = await import('node:fs');
    const rules = parse(readFileSync(DEPLOY_FILES.rules, 'utf8')) as { groups: { rules: { alert: string; labels?: { severity?: string }; annotations?: { summary?: string } }[] }[] };
    const tests = readFileSync(DEPLOY_FILES.ruleTests, 'utf8');
    for (const rule of rules.groups.flatMap((g) => g.rules)) {
      assert.match(String(rule.labels?.severity), /^(warning|critical)$/, rule.alert);
      assert.ok(rule.annotations?.summary, `${rule.alert} has a summary`);
      assert.ok(tests.includes(`alertname: ${rule.alert}`), `${rule.alert} is tested in kiln-alerts.test.yml`);
    }
  });

  test('the board, the rules and the autoscaling triggers read only metrics kiln serves', async () => {
    const served = await servedMetricNames();
    for (const { source, expr } of allQueries()) {
      const names = metricNamesOf(expr);
      assert.ok(names.length > 0, `${source}: ${expr} reads a metric`);
      for (const name of names) {
        assert.ok(name.startsWith('kiln_'), `${source} reads ${name}, which is not one of kiln's metrics`);
        assert.ok(served.has(name), `${source} reads ${name}, which kiln does not serve`);
      }
    }
    assert.ok(autoscalingQueries().some((q) => q.expr.includes('kiln_worker_busy_slots')), 'autoscaling uses utilization');
    assert.ok(autoscalingQueries().some((q) => q.expr.includes('kiln_queue_oldest_ready_age_seconds')), 'autoscaling uses oldest age');
    assert.ok(autoscalingQueries().some((q) => q.expr.includes('kiln_queue_jobs')), 'autoscaling uses depth');
  });

  test('the Grafana board: unique panel ids, every panel on the datasource variable with at least one target, variables from kiln metrics', () => {
    const board = readBoard();
    assert.equal(board.uid, 'kiln-overview');
    const ids = board.panels.map((p) => p.id);
    assert.equal(new Set(ids).size, ids.length, 'panel ids are unique');
    for (const panel of board.panels.filter((p) => p.type !== 'row')) {
      assert.equal(panel.datasource?.uid, '${datasource}', panel.title);
      assert.ok((panel.targets ?? []).length > 0, `${panel.title} has targets`);
      for (const target of panel.targets ?? []) assert.equal(target.datasource?.uid, '${datasource}', `${panel.title} ${target.refId}`);
      assert.ok(panel.gridPos.x + panel.gridPos.w <= 24, `${panel.title} fits the grid`);
    }
    assert.ok(boardPanels().length >= 20);
    const variables = board.templating.list;
    assert.deepEqual(variables.map((v) => v.name), ['datasource', 'pipeline', 'queue']);
    for (const v of variables.filter((x) => x.type === 'query')) {
      const query = typeof v.query === 'string' ? v.query : v.query.query;
      assert.match(query, /^label_values\(kiln_[a-z_]+, [a-z_]+\)$/, v.name);
    }
  });
});
