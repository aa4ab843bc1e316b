import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseDurationMs } from '../../src/config/duration.ts';
import { loadConfig } from '../../src/config/load.ts';
import { RETENTION_DEFAULTS } from '../../src/config/retention-settings.ts';
import { CONFIG_DEFAULTS } from '../../src/config/schema.ts';
import { issuesOf, useConfigDir } from '../support/config-files.ts';

const DAY = 86_400_000;
const configDir = useConfigDir('kiln-config-retention-');

function load() {
  return loadConfig({ cwd: configDir.path(), env: {}, pipelines: [] });
}

describe('retention config', () => {
  test('without a retention section: succeeded 7 days, failed and cancelled 30 days, requests 30 days, batches of 100 every minute', () => {
    const { retention } = load();
    assert.deepEqual(retention, { succeededMs: 7 * DAY, failedMs: 30 * DAY, cancelledMs: 30 * DAY, requestsMs: 30 * DAY, batchSize: 100, intervalMs: 60_000 });
    assert.deepEqual(CONFIG_DEFAULTS.retention, RETENTION_DEFAULTS);
  });

  test('durations take a day unit; forever keeps a kind for good; unset fields keep their defaults', () => {
    configDir.writeYaml(['retention:', '  succeeded: 1d', '  failed: forever', '  requests: 36h', '  batchSize: 50', '  interval: 10s'].join('\n'));
    const { retention } = load();
    assert.deepEqual(retention, { succeededMs: DAY, failedMs: null, cancelledMs: 30 * DAY, requestsMs: 36 * 3_600_000, batchSize: 50, intervalMs: 10_000 });
    assert.ok(Object.isFrozen(retention));
    assert.equal(parseDurationMs('1.5d'), 1.5 * DAY);
  });

  test('interval 0 turns the workers\' prune pass off', () => {
    configDir.writeYaml('retention:\n  interval: 0\n');
    assert.equal(load().retention.intervalMs, 0);
  });

  test('a bad period, a zero period, a batch of 0 and an unknown key are reported together with their lines', () => {
    const file = configDir.writeYaml(['retention:', '  succeeded: a week', '  failed: 0', '  batchSize: 0', '  keep: 3d'].join('\n'));
    const issues = issuesOf(() => load());
    assert.deepEqual(
      issues.map((i) => [i.path, i.line, i.source]),
      [
        ['retention.succeeded', 2, file],
        ['retention.failed', 3, file],
        ['retention.batchSize', 4, file],
        ['retention.keep', 5, file],
      ],
    );
    const byPath = new Map(issues.map((i) => [i.path, i.message]));
    assert.match(byPath.get('retention.succeeded') ?? '', /duration string like .*, or forever, got "a week"/);
    assert.match(byPath.get('retention.failed') ?? '', /at least 1 ms/);
    assert.match(byPath.get('retention.keep') ?? '', /unknown key "keep"/);
  });
});
