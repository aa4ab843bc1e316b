/**
 * Lock settings in kiln.yaml: `worker.lock` (the provider is the selected store's own, redis on
 * the Redis store; another store's or an unknown provider is refused naming the providers that
 * exist; `ttl` is the default TTL) and a
 * stage's `lock` override (key template and TTL, checked at load with file and line).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig, type LoadConfigOptions } from '../../src/config/load.ts';
import { definePipeline } from '../../src/core/pipeline/define-pipeline.ts';
import { createStagePlan } from '../../src/engine/stage-plan.ts';
import { issuesOf, useConfigDir } from '../support/config-files.ts';

const assets = definePipeline({
  name: 'assets',
  version: 1,
  stages: [
    { name: 'render', handler: () => null, policy: { heartbeatMs: 1_000, lock: { key: 'render:{{input.assetId}}' } } },
    { name: 'publish', handler: () => null },
  ],
});
const pipelines = [assets];

const dir = useConfigDir('kiln-config-locks-');

function load(yaml: string, options: Partial<LoadConfigOptions> = {}) {
  dir.writeYaml(yaml);
  return loadConfig({ cwd: dir.path(), env: {}, pipelines, ...options });
}

describe('worker.lock', () => {
  test('ttl sets the default lock TTL; the provider is the selected store', () => {
    assert.deepEqual(load('worker:\n  lock:\n    provider: sqlite\n    ttl: 45s\n').worker.lock, { provider: 'sqlite', ttlMs: 45_000 });
    assert.deepEqual(load('worker: { lock: { ttl: 2m } }\n').worker.lock, { provider: 'sqlite', ttlMs: 120_000 });
    const pg = load('store: { url: "postgres://kiln@localhost/kiln" }\nworker: { lock: { provider: postgres } }\n').worker.lock;
    assert.deepEqual(pg, { provider: 'postgres', ttlMs: 30_000 });
    assert.deepEqual(load('store: { url: "postgres://kiln@localhost/kiln" }\n').worker.lock, { provider: 'postgres', ttlMs: 30_000 }, 'the default follows the store');
  });

  test('provider redis is the Redis store\'s own locks: valid when the store is Redis, and the default there', () => {
    const redis = 'store: { url: "redis://127.0.0.1:6379" }\n';
    assert.deepEqual(load(`${redis}worker: { lock: { provider: redis, ttl: 45s } }\n`).worker.lock, { provider: 'redis', ttlMs: 45_000 });
    assert.deepEqual(load(`${redis}worker: { lock: { provider: store } }\n`).worker.lock, { provider: 'redis', ttlMs: 30_000 });
    assert.deepEqual(load(redis).worker.lock, { provider: 'redis', ttlMs: 30_000 }, 'the default follows the store');
    assert.deepEqual(load('worker: { lock: { provider: redis } }\n', { env: { KILN_STORE: 'redis://cache:6379' } }).worker.lock, { provider: 'redis', ttlMs: 30_000 });
  });

  test('provider redis with another store is refused at its line, saying how to select the Redis store', () => {
    const issues = issuesOf(() => load('worker:\n  concurrency: 8\n  lock:\n    provider: redis\n    ttl: 45s\n'));
    const provider = issues.find((i) => i.path === 'worker.lock.provider');
    assert.ok(provider, JSON.stringify(issues));
    assert.equal(provider.line, 4);
    assert.match(provider.message, /lock provider redis is not the selected store \(sqlite\): locks are kept by the store/);
    assert.match(provider.message, /select the Redis store with store\.url, KILN_STORE or --store redis:\/\/host:6379/);
    assert.match(provider.message, /use sqlite or leave provider out/);
    const pg = issuesOf(() => load('store: { url: "postgres://kiln@localhost/kiln" }\nworker: { lock: { provider: redis } }\n'));
    assert.match(pg[0]?.message ?? '', /lock provider redis is not the selected store \(postgres\)/);
  });

  test('an unknown provider, or another store than the selected one, is refused', () => {
    assert.match(issuesOf(() => load('worker: { lock: { provider: zookeeper } }\n'))[0]?.message ?? '', /unknown lock provider "zookeeper"; providers: store \(the selected store\), or its own kind: sqlite, postgres, memory, redis/);
    assert.match(issuesOf(() => load('worker: { lock: { provider: postgres } }\n'))[0]?.message ?? '', /lock provider postgres is not the selected store \(sqlite\)/);
    assert.match(issuesOf(() => load('worker: { lock: { ttl: -1s } }\n'))[0]?.path ?? '', /worker\.lock\.ttl/);
  });
});

describe('stage lock overrides', () => {
  test('a stage lock is set in kiln.yaml with durations like every policy field, layered over the definition', () => {
    const config = load(
      ['pipelines:', '  assets:', '    stages:', '      render: { lock: { ttlMs: 45s } }', '      publish:', '        lock: { key: "publish:{{input.assetId}}", ttlMs: 5000 }'].join('\n'),
    );
    assert.deepEqual(config.policies['assets']?.['render']?.lock, { ttlMs: 45_000 });
    assert.deepEqual(config.policies['assets']?.['publish']?.lock, { key: 'publish:{{input.assetId}}', ttlMs: 5_000 });
    const plan = createStagePlan(pipelines, config.policies, { lockTtlMs: config.worker.lock.ttlMs });
    assert.equal(plan.stage('assets', 'render').policy.lock?.key, 'render:{{input.assetId}}', 'the key from the definition');
    assert.equal(plan.stage('assets', 'render').lock?.ttlMs, 45_000);
    assert.equal(plan.stage('assets', 'publish').lock?.ttlMs, 5_000);
  });

  test('a bad key template and a TTL not above the heartbeat are issues with their lines', () => {
    const issues = issuesOf(() =>
      load(['pipelines:', '  assets:', '    stages:', '      render:', '        lock:', '          ttlMs: 1s', '      publish:', '        lock: { key: "p:{{assetId}}" }'].join('\n')),
    );
    assert.deepEqual(
      issues.map((i) => [i.path, i.line]),
      [
        ['pipelines.assets.stages.render.lock.ttlMs', 6],
        ['pipelines.assets.stages.publish.lock.key', 8],
      ],
    );
    assert.match(issues[0]?.message ?? '', /must be above heartbeatMs \(1000\)/);
    assert.match(issues[1]?.message ?? '', /must start with one of: input, run, stage/);
  });

  test('a lock override on a stage without a lock must name a key', () => {
    const issues = issuesOf(() => load('pipelines:\n  assets:\n    stages:\n      publish: { lock: { ttlMs: 5s } }\n'));
    assert.deepEqual(issues.map((i) => i.path), ['pipelines.assets.stages.publish.lock.key']);
    assert.match(issues[0]?.message ?? '', /is required/);
  });
});
