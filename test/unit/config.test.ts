import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parseDurationMs } from '../../src/config/duration.ts';
import { loadConfig, type LoadConfigOptions } from '../../src/config/load.ts';
import { CONFIG_DEFAULTS } from '../../src/config/schema.ts';
import { ConfigError } from '../../src/core/errors.ts';
import { definePipeline } from '../../src/core/pipeline/define-pipeline.ts';
import { issuesOf, useConfigDir } from '../support/config-files.ts';

const demo = definePipeline({
  name: 'demo.sleep',
  version: 1,
  stages: [
    { name: 'prepare', handler: () => null },
    { name: 'finish', handler: () => null, policy: { leaseMs: 30_000 } },
  ],
});
const pipelines = [demo];

const configDir = useConfigDir('kiln-config-');
const writeYaml = configDir.writeYaml;

function load(options: Partial<LoadConfigOptions> = {}) {
  return loadConfig({ cwd: configDir.path(), env: {}, pipelines, ...options });
}

describe('loadConfig', () => {
  test('a wrong type, an unknown stage and a negative duration are reported together, each with its line', () => {
    const file = writeYaml(
      [
        'http:', //                                  1
        '  port: not-a-number', //                   2
        'pipelines:', //                             3
        '  demo.sleep:', //                          4
        '    stages:', //                            5
        '      prepare:', //                         6
        '        timeoutMs: -5', //                  7
        '      render: { maxAttempts: 2 }', //       8
      ].join('\n'),
    );
    let error: unknown;
    try {
      load();
    } catch (err) {
      error = err;
    }
    assert.ok(error instanceof ConfigError);
    const byPath = new Map(error.issues.map((i) => [i.path, i]));
    assert.equal(error.issues.length, 3, error.message);
    assert.deepEqual(
      error.issues.map((i) => [i.path, i.line, i.source]),
      [
        ['http.port', 2, file],
        ['pipelines.demo.sleep.stages.prepare.timeoutMs', 7, file],
        ['pipelines.demo.sleep.stages.render', 8, file],
      ],
    );
    assert.match(byPath.get('http.port')!.message, /integer.*"not-a-number"/);
    assert.match(byPath.get('pipelines.demo.sleep.stages.prepare.timeoutMs')!.message, /non-negative.*-5/);
    assert.match(byPath.get('pipelines.demo.sleep.stages.render')!.message, /unknown stage "render".*prepare, finish/);
    assert.match(error.message, new RegExp(`${escape(file)}:2:9 http\\.port: `));
    assert.match(error.message, new RegExp(`${escape(file)}:7:20 pipelines\\.demo\\.sleep\\.stages\\.prepare\\.timeoutMs: `));
    assert.match(error.message, new RegExp(`${escape(file)}:8:7 pipelines\\.demo\\.sleep\\.stages\\.render: `));
  });

  test('without file, env or flags every field has its documented default and the result is deep-frozen', () => {
    const config = load();
    assert.equal(config.source, null);
    assert.deepEqual(config.store, { kind: 'sqlite', path: join(configDir.path(), 'kiln.db') });
    assert.deepEqual(config.artifacts, { root: join(configDir.path(), 'kiln-data/artifacts'), inlineMaxBytes: 16_384 });
    assert.deepEqual(config.http, { host: '127.0.0.1', port: 8080, bodyLimitBytes: 65_536, requestTimeoutMs: 10_000, auth: { metrics: 'public' } });
    assert.deepEqual(config.worker, {
      pollMs: 250,
      reapMs: 1_000,
      shutdownGraceMs: 10_000,
      tempGraceMs: 3_600_000,
      artifactGraceMs: 3_600_000,
      workDir: join(configDir.path(), 'kiln-data/work'),
      lock: { provider: 'sqlite', ttlMs: 30_000 },
    });
    assert.deepEqual(config.log, { level: 'info', format: 'auto' });
    assert.deepEqual(config.policies, {});
    assert.ok(Object.isFrozen(config) && Object.isFrozen(config.http) && Object.isFrozen(config.policies));
    assert.throws(() => {
      (config.http as { port: number }).port = 1;
    }, TypeError);
    assert.equal(CONFIG_DEFAULTS.http.port, 8080);
  });

  test('http.auth.metrics is public unless the file says token; other values are refused with their line', () => {
    writeYaml('http: { port: 8081, auth: {} }\n');
    assert.deepEqual(load().http.auth, { metrics: 'public' });
    writeYaml('http: { auth: { metrics: token } }\n');
    assert.deepEqual(load().http.auth, { metrics: 'token' });
    writeYaml('http:\n  auth:\n    metrics: open\n');
    assert.throws(load, (err: ConfigError) => err.issues.some((i) => i.path.startsWith('http.auth.metrics') && i.line === 3));
  });

  test('flags win over env, env over the file, the file over defaults', () => {
    writeYaml('http: { host: file-host, port: 8081 }\nlog: { level: debug }\nstore: { path: file.db }\n');
    const fileOnly = load();
    assert.equal(fileOnly.http.port, 8081);
    assert.equal(fileOnly.http.host, 'file-host');
    const withEnv = load({ env: { PORT: '8082', HOST: 'env-host', KILN_LOG_LEVEL: 'warn', KILN_DB: '/data/env.db' } });
    assert.deepEqual([withEnv.http.port, withEnv.http.host, withEnv.log.level, withEnv.store], [8082, 'env-host', 'warn', { kind: 'sqlite', path: '/data/env.db' }]);
    const withFlags = load({ env: { PORT: '8082', HOST: 'env-host' }, flags: { port: 8083, host: 'flag-host', logLevel: 'error', db: 'flag.db' } });
    assert.deepEqual(
      [withFlags.http.port, withFlags.http.host, withFlags.log.level, withFlags.store],
      [8083, 'flag-host', 'error', { kind: 'sqlite', path: join(configDir.path(), 'flag.db') }],
    );
  });

  test('log.format comes from the file, KILN_LOG_FORMAT or --log-format, and only json, pretty or auto pass', () => {
    writeYaml('log: { format: json }\n');
    assert.equal(load().log.format, 'json');
    assert.equal(load({ env: { KILN_LOG_FORMAT: 'pretty' } }).log.format, 'pretty');
    assert.equal(load({ env: { KILN_LOG_FORMAT: 'pretty' }, flags: { logFormat: 'auto' } }).log.format, 'auto');
    const issues = issuesOf(() => load({ env: { KILN_LOG_FORMAT: 'fancy' } }));
    assert.ok(issues.some((i) => i.path === 'KILN_LOG_FORMAT' || i.path === 'log.format'), JSON.stringify(issues));
  });

  test('KILN_-prefixed variables win over the generic HOST and PORT, and empty values count as unset', () => {
    const config = load({ env: { PORT: '1', KILN_PORT: '2', HOST: 'a', KILN_HOST: 'b', KILN_LOG_LEVEL: '' } });
    assert.equal(config.http.port, 2);
    assert.equal(config.http.host, 'b');
    assert.equal(config.log.level, 'info');
  });

  test('paths in the file are relative to the file, paths from env and defaults to cwd', () => {
    // A config outside cwd shows which base each source uses.
    const sub = join(configDir.path(), 'conf');
    mkdirSync(sub);
    const file = join(sub, 'kiln.yaml');
    writeFileSync(file, 'store: { path: ./k.db }\n');
    const config = load({ file, env: { KILN_ARTIFACTS: 'arts' } });
    assert.equal(config.source, file);
    assert.deepEqual(config.store, { kind: 'sqlite', path: join(sub, 'k.db') });
    assert.equal(config.artifacts.root, join(configDir.path(), 'arts'));
  });

  test('artifacts.url selects the S3 artifact store with the S3 fields beside it; KILN_ARTIFACTS_URL and KILN_ARTIFACTS override the file', () => {
    writeYaml('artifacts:\n  url: s3://bucket/kiln\n  endpoint: http://127.0.0.1:9000\n  region: eu-west-3\n  forcePathStyle: true\n  accessKeyId: AK\n  secretAccessKey: SK\n');
    const s3 = { url: 's3://bucket/kiln', endpoint: 'http://127.0.0.1:9000', region: 'eu-west-3', forcePathStyle: true, accessKeyId: 'AK', secretAccessKey: 'SK' };
    assert.deepEqual(load().artifacts, { root: join(configDir.path(), 'kiln-data/artifacts'), inlineMaxBytes: 16_384, s3 });
    assert.deepEqual(load({ env: { KILN_ARTIFACTS_URL: 's3://other' } }).artifacts.s3, { ...s3, url: 's3://other' });
    assert.deepEqual(load({ env: { KILN_ARTIFACTS: 'arts' } }).artifacts, { root: join(configDir.path(), 'arts'), inlineMaxBytes: 16_384 }, 'a directory from the environment wins over the file\'s bucket');
    writeYaml('artifacts:\n  root: ./arts\n');
    assert.deepEqual(load({ env: { KILN_ARTIFACTS_URL: 's3://bucket' } }).artifacts.s3, { url: 's3://bucket' });
    writeYaml('artifacts:\n  url: https://bucket\n  endpoint: 127.0.0.1:9000\n');
    const paths = issuesOf(() => load()).map((i) => i.path);
    assert.ok(paths.includes('artifacts.url') && paths.includes('artifacts.endpoint'), JSON.stringify(paths));
  });

  test('artifacts.maxBytes is the filesystem store\'s byte limit: a positive integer, kept with root, dropped with an S3 url', () => {
    writeYaml('artifacts:\n  root: ./arts\n  maxBytes: 1048576\n');
    assert.deepEqual(load().artifacts, { root: join(configDir.path(), 'arts'), maxBytes: 1_048_576, inlineMaxBytes: 16_384 });
    assert.deepEqual(load({ env: { KILN_ARTIFACTS_URL: 's3://bucket' } }).artifacts, { root: join(configDir.path(), 'arts'), inlineMaxBytes: 16_384, s3: { url: 's3://bucket' } });
    for (const bad of ['0', '1.5', '"1GB"']) {
      writeYaml(`artifacts:\n  maxBytes: ${bad}\n`);
      assert.deepEqual(issuesOf(() => load()).map((i) => i.path), ['artifacts.maxBytes'], bad);
    }
  });

  test('artifacts.inlineMaxBytes defaults to 16384, is kept with root and with an S3 url, and 0 (off) is allowed', () => {
    writeYaml('artifacts:\n  inlineMaxBytes: 0\n');
    assert.equal(load().artifacts.inlineMaxBytes, 0);
    writeYaml('artifacts:\n  url: s3://bucket\n  inlineMaxBytes: 4096\n');
    assert.equal(load().artifacts.inlineMaxBytes, 4096);
    for (const bad of ['-1', '1.5', '"16KB"']) {
      writeYaml(`artifacts:\n  inlineMaxBytes: ${bad}\n`);
      assert.deepEqual(issuesOf(() => load()).map((i) => i.path), ['artifacts.inlineMaxBytes'], bad);
    }
  });

  test('durations accept integer ms or unit strings and pipeline defaults fold into every stage', () => {
    writeYaml(
      [
        'worker: { pollMs: 100ms, reapMs: 2s, shutdownGraceMs: 1m, tempGraceMs: 1.5h }',
        'pipelines:',
        '  demo.sleep:',
        '    defaults: { maxAttempts: 3, backoff: { baseMs: 100 } }',
        '    stages:',
        '      prepare: { timeoutMs: 5000, leaseMs: 5s, backoff: { capMs: 1000 }, isolation: thread }',
      ].join('\n'),
    );
    const config = load();
    assert.deepEqual(config.worker, {
      pollMs: 100,
      reapMs: 2_000,
      shutdownGraceMs: 60_000,
      tempGraceMs: 5_400_000,
      artifactGraceMs: 3_600_000,
      workDir: join(configDir.path(), 'kiln-data/work'),
      lock: { provider: 'sqlite', ttlMs: 30_000 },
    });
    assert.deepEqual(config.policies, {
      'demo.sleep': {
        prepare: { maxAttempts: 3, timeoutMs: 5_000, leaseMs: 5_000, backoff: { baseMs: 100, capMs: 1_000 }, isolation: 'thread' },
        finish: { maxAttempts: 3, backoff: { baseMs: 100 } },
      },
    });
  });

  test('only listed stages get overrides when a pipeline has no defaults', () => {
    writeYaml('pipelines:\n  demo.sleep:\n    stages:\n      finish: { priority: -1 }\n');
    assert.deepEqual(load().policies, { 'demo.sleep': { finish: { priority: -1 } } });
  });

  test('maxRetriesRunning is a per-stage policy: defaults fold into every stage, a stage overrides, a negative cap is an issue', () => {
    writeYaml('pipelines:\n  demo.sleep:\n    defaults: { maxRetriesRunning: 2 }\n    stages:\n      finish: { maxRetriesRunning: 0 }\n');
    assert.deepEqual(load().policies, { 'demo.sleep': { prepare: { maxRetriesRunning: 2 }, finish: { maxRetriesRunning: 0 } } });
    writeYaml('pipelines:\n  demo.sleep:\n    stages:\n      finish: { maxRetriesRunning: -1 }\n');
    assert.deepEqual(
      issuesOf(() => load()).map((i) => [i.path, i.line]),
      [['pipelines.demo.sleep.stages.finish.maxRetriesRunning', 4]],
    );
  });

  test('unknown keys at any depth are named with their line', () => {
    writeYaml(['stroe: { path: x }', 'http:', '  prot: 1', 'pipelines:', '  demo.sleep:', '    stages:', '      prepare: { retries: 3 }'].join('\n'));
    const issues = issuesOf(() => load());
    assert.deepEqual(
      issues.map((i) => [i.path, i.line]),
      [
        ['stroe', 1],
        ['http.prot', 3],
        ['pipelines.demo.sleep.stages.prepare.retries', 7],
      ],
    );
    assert.match(issues[0]!.message, /unknown key "stroe" \(allowed: store, artifacts, http, worker, log, retention, pipelines, pipeline, admission\)/);
    assert.match(issues[2]!.message, /unknown key "retries"/);
  });

  test('an unknown pipeline is rejected with the registered names', () => {
    writeYaml('log: { level: info }\npipelines:\n  qr.code: { defaults: { maxAttempts: 2 } }\n');
    const issues = issuesOf(() => load());
    assert.deepEqual(issues.map((i) => [i.path, i.line]), [['pipelines.qr.code', 3]]);
    assert.match(issues[0]!.message, /unknown pipeline "qr.code" \(registered: demo.sleep\)/);
  });

  test('a YAML syntax error is an issue with its line', () => {
    writeYaml('http:\n  port: 8080\n  host: [unclosed\nlog: { level: info }\n');
    const issues = issuesOf(() => load());
    assert.ok(issues.length >= 1);
    assert.match(issues[0]!.message, /^YAML syntax/);
    assert.equal(typeof issues[0]!.line, 'number');
    assert.ok(issues[0]!.line! >= 3);
  });

  test('empty values and sections whose entries are all commented out count as unset', () => {
    writeYaml('http:\n  # port: 1\npipelines:\n  demo.sleep:\n    stages:\n      # prepare: {}\nlog: { level: ~ }\n');
    const config = load();
    assert.equal(config.http.port, 8080);
    assert.equal(config.log.level, 'info');
    assert.deepEqual(config.policies, { 'demo.sleep': {} });
  });

  test('a document that is not a mapping is rejected', () => {
    writeYaml('- a\n- b\n');
    assert.match(issuesOf(() => load())[0]!.message, /must be a mapping/);
  });

  test('resolved policies are checked after merging with the definition, pointing at the line that set the field', () => {
    writeYaml(
      [
        'pipelines:',
        '  demo.sleep:',
        '    defaults:',
        '      heartbeatMs: 15s', // 4: above prepare's default lease (10 s), below finish's definition lease (30 s)
        '    stages:',
        '      prepare: { backoff: { baseMs: 5s, capMs: 1s } }', // 6
      ].join('\n'),
    );
    const issues = issuesOf(() => load());
    assert.deepEqual(
      issues.map((i) => [i.path, i.line]),
      [
        ['pipelines.demo.sleep.stages.prepare.heartbeatMs', 4],
        ['pipelines.demo.sleep.stages.prepare.backoff.capMs', 6],
      ],
    );
    assert.match(issues[0]!.message, /below leaseMs \(10000\)/);
  });

  test('a heartbeat not below the lease is an issue on the heartbeatMs line', () => {
    writeYaml('pipelines:\n  demo.sleep:\n    stages:\n      prepare:\n        leaseMs: 1s\n        heartbeatMs: 1s\n');
    const issues = issuesOf(() => load());
    assert.deepEqual(issues.map((i) => [i.path, i.line]), [['pipelines.demo.sleep.stages.prepare.heartbeatMs', 6]]);
  });

  test('a lease set without a heartbeat gets a heartbeat of a quarter of the lease', () => {
    writeYaml('pipelines:\n  demo.sleep:\n    stages:\n      prepare:\n        leaseMs: 2s\n');
    assert.doesNotThrow(() => load());
  });

  test('bad environment values and flags are issues with source env and flags, listed with file issues', () => {
    writeYaml('http: { port: 99999 }\n');
    const issues = issuesOf(() => load({ env: { PORT: 'abc', KILN_LOG_LEVEL: 'loud' }, flags: { port: Number.NaN, logLevel: 'verbose' } }));
    assert.deepEqual(
      issues.map((i) => [i.source, i.path]),
      [
        [join(configDir.path(), 'kiln.yaml'), 'http.port'],
        ['env', 'PORT'],
        ['env', 'KILN_LOG_LEVEL'],
        ['flags', '--port'],
        ['flags', '--log-level'],
      ],
    );
    assert.match(issues[1]!.message, /integer.*"abc".*http\.port/);
    assert.match(issues[2]!.message, /one of trace, debug, info, warn, error, fatal, silent, got "loud"/);
    assert.match(issues[3]!.message, /NaN/);
  });

  test('an explicit --config or KILN_CONFIG that does not exist is an issue, a missing ./kiln.yaml is not', () => {
    assert.deepEqual(
      issuesOf(() => load({ file: 'missing.yaml' })).map((i) => [i.source, i.path]),
      [['flags', '--config']],
    );
    assert.deepEqual(
      issuesOf(() => load({ env: { KILN_CONFIG: '/nonexistent/kiln.yaml' } })).map((i) => [i.source, i.path]),
      [['env', 'KILN_CONFIG']],
    );
    assert.equal(load().source, null);
  });

  test('KILN_CONFIG names the file when no --config is given', () => {
    const other = writeYaml('http: { port: 7000 }\n', 'other.yaml');
    writeYaml('http: { port: 7001 }\n');
    assert.equal(load({ env: { KILN_CONFIG: 'other.yaml' } }).http.port, 7000);
    assert.equal(load({ env: { KILN_CONFIG: 'other.yaml' }, file: 'kiln.yaml' }).http.port, 7001);
    assert.equal(load({ env: { KILN_CONFIG: other } }).source, other);
  });

  test('worker intervals must be positive', () => {
    writeYaml('worker:\n  pollMs: 0\n  reapMs: 0s\n  tempGraceMs: 0\n');
    assert.deepEqual(issuesOf(() => load()).map((i) => [i.path, i.line]), [
      ['worker.pollMs', 2],
      ['worker.reapMs', 3],
    ]);
  });
});

describe('parseDurationMs', () => {
  test('converts units to whole milliseconds', () => {
    assert.equal(parseDurationMs(250), 250);
    assert.equal(parseDurationMs('250ms'), 250);
    assert.equal(parseDurationMs('2s'), 2_000);
    assert.equal(parseDurationMs('1.1s'), 1_100);
    assert.equal(parseDurationMs('1m'), 60_000);
    assert.equal(parseDurationMs('1h'), 3_600_000);
    assert.equal(parseDurationMs('0ms'), 0);
  });

  test('rejects negatives, fractional milliseconds, missing or unknown units and other types', () => {
    for (const bad of [-1, 1.5, '-5s', '1.5ms', '10', '5w', '', ' 5s', null, true, {}]) {
      assert.equal(parseDurationMs(bad), undefined, `accepted ${JSON.stringify(bad)}`);
    }
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

