import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { loadConfig, type LoadConfigOptions } from '../../src/config/load.ts';
import { describeStore, parseStoreSpec, redactSecrets, redactUrl } from '../../src/config/store-url.ts';
import { ConfigError, type ConfigIssue } from '../../src/core/errors.ts';

const PG_URL = 'postgres://kiln:s3cret-pw@db.internal:5432/kiln';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kiln-config-store-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function writeYaml(text: string): string {
  const path = join(dir, 'kiln.yaml');
  writeFileSync(path, text);
  return path;
}

function load(options: Partial<LoadConfigOptions> = {}) {
  return loadConfig({ cwd: dir, env: {}, pipelines: [], ...options });
}

/** Runs `fn`, asserts it throws a ConfigError whose text never shows the password, and returns its issues. */
function issuesOf(fn: () => unknown): readonly ConfigIssue[] {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    assert.doesNotMatch(err.message, /s3cret/);
    return err.issues;
  }
  assert.fail('expected loadConfig to throw');
}

describe('store selection', () => {
  test('KILN_STORE with a postgres URL selects PostgreSQL in schema kiln; KILN_PG_SCHEMA names another schema', () => {
    assert.deepEqual(load({ env: { KILN_STORE: PG_URL } }).store, { kind: 'postgres', url: PG_URL, schema: 'kiln' });
    assert.deepEqual(load({ env: { KILN_STORE: PG_URL, KILN_PG_SCHEMA: 'kiln_staging' } }).store, {
      kind: 'postgres',
      url: PG_URL,
      schema: 'kiln_staging',
    });
  });

  test('store.url and store.schema in kiln.yaml select PostgreSQL, and kind: postgres may take its URL from KILN_STORE', () => {
    writeYaml(`store:\n  url: ${PG_URL}\n  schema: tenant_a\n`);
    assert.deepEqual(load().store, { kind: 'postgres', url: PG_URL, schema: 'tenant_a' });
    writeYaml('store:\n  kind: postgres\n');
    assert.deepEqual(load({ env: { KILN_STORE: PG_URL } }).store, { kind: 'postgres', url: PG_URL, schema: 'kiln' });
  });

  test('the highest source that names a store wins: --db over a file URL, --store over a file path', () => {
    writeYaml(`store: { url: "${PG_URL}" }\n`);
    assert.deepEqual(load({ flags: { db: 'local.db' } }).store, { kind: 'sqlite', path: join(dir, 'local.db') });
    assert.deepEqual(load({ env: { KILN_DB: '/data/env.db' } }).store, { kind: 'sqlite', path: '/data/env.db' });
    writeYaml('store: { path: file.db }\n');
    assert.deepEqual(load({ flags: { store: PG_URL } }).store, { kind: 'postgres', url: PG_URL, schema: 'kiln' });
    assert.deepEqual(load({ env: { KILN_STORE: PG_URL }, flags: { db: 'f.db' } }).store, { kind: 'sqlite', path: join(dir, 'f.db') });
  });

  test('--store sqlite:<path> selects SQLite relative to cwd, and sqlite::memory: stays in memory', () => {
    assert.deepEqual(load({ flags: { store: 'sqlite:./data/k.db' } }).store, { kind: 'sqlite', path: join(dir, 'data/k.db') });
    assert.deepEqual(load({ env: { KILN_STORE: 'sqlite::memory:' } }).store, { kind: 'sqlite', path: ':memory:' });
  });

  test('naming two stores in one source is an issue: --db with --store, KILN_DB with KILN_STORE', () => {
    const flags = issuesOf(() => load({ flags: { db: 'a.db', store: PG_URL } }));
    assert.deepEqual(
      flags.map((i) => [i.source, i.path]),
      [['flags', '--store']],
    );
    assert.match(flags[0]!.message, /selects PostgreSQL but --db names a SQLite file too/);
    const env = issuesOf(() => load({ env: { KILN_DB: 'a.db', KILN_STORE: 'sqlite:b.db' } }));
    assert.deepEqual(
      env.map((i) => [i.source, i.path]),
      [['env', 'KILN_STORE']],
    );
  });

  test('contradictions inside kiln.yaml are issues with their lines', () => {
    const file = writeYaml(['store:', '  path: a.db', `  url: ${PG_URL}`, ''].join('\n'));
    const both = issuesOf(() => load());
    assert.deepEqual(
      both.map((i) => [i.source, i.path, i.line]),
      [[file, 'store.url', 3]],
    );
    writeYaml(['store:', '  kind: sqlite', `  url: ${PG_URL}`, ''].join('\n'));
    assert.match(issuesOf(() => load())[0]!.message, /kind is sqlite but url selects PostgreSQL/);
    writeYaml(['store:', '  kind: postgres', ''].join('\n'));
    const missing = issuesOf(() => load());
    assert.deepEqual(
      missing.map((i) => [i.path, i.line]),
      [['store.kind', 2]],
    );
    assert.match(missing[0]!.message, /no URL is set \(store\.url, KILN_STORE or --store\)/);
    writeYaml(['store:', '  path: a.db', '  schema: x', ''].join('\n'));
    assert.match(issuesOf(() => load())[0]!.message, /schema applies to the postgres store only/);
  });

  test('bad URLs, specs and schema names are issues that never show the password', () => {
    writeYaml('store:\n  url: "mysql://kiln:s3cret-pw@h/db"\n');
    const fileIssue = issuesOf(() => load())[0]!;
    assert.equal(fileIssue.path, 'store.url');
    assert.match(fileIssue.message, /must be a postgres:\/\/, postgresql:\/\/, redis:\/\/ or rediss:\/\/ URL, got mysql:\/\/kiln:\*\*\*@h\/db/);
    rmSync(join(dir, 'kiln.yaml'));
    const spec = issuesOf(() => load({ flags: { store: 'mysql://kiln:s3cret-pw@h/db' } }));
    assert.match(spec[0]!.message, /must be a postgres:\/\/ or redis:\/\/ URL or sqlite:<path>/);
    assert.match(issuesOf(() => load({ flags: { store: './bare.db' } }))[0]!.message, /sqlite:<path>/);
    assert.match(issuesOf(() => load({ env: { KILN_STORE: 'postgres:///db' } }))[0]!.message, /must name a host/);
    const schema = issuesOf(() => load({ env: { KILN_STORE: PG_URL, KILN_PG_SCHEMA: 'Bad-Name' } }));
    assert.deepEqual(
      schema.map((i) => [i.source, i.path]),
      [['env', 'KILN_PG_SCHEMA']],
    );
  });
});

const REDIS_URL = 'redis://:s3cret-pw@cache.internal:6379/2';

describe('redis store selection', () => {
  test('KILN_STORE, --store and store.url with a redis:// URL select Redis, named default unless ?name= says otherwise', () => {
    const expected = { kind: 'redis', url: REDIS_URL, name: 'default' };
    assert.deepEqual(load({ env: { KILN_STORE: REDIS_URL } }).store, expected);
    assert.deepEqual(load({ flags: { store: REDIS_URL } }).store, expected);
    writeYaml(`store:\n  url: ${REDIS_URL}\n`);
    assert.deepEqual(load().store, expected);
    assert.deepEqual(load({ env: { KILN_STORE: `${REDIS_URL}?name=tenant-a.prod` } }).store, { kind: 'redis', url: REDIS_URL, name: 'tenant-a.prod' });
  });

  test('the name leaves the URL the driver gets, other query parameters stay, and rediss:// (TLS) selects Redis too', () => {
    const store = load({ flags: { store: 'rediss://kiln:s3cret-pw@cache:6380/0?name=blue&family=6' } }).store;
    assert.deepEqual(store, { kind: 'redis', url: 'rediss://kiln:s3cret-pw@cache:6380/0?family=6', name: 'blue' });
    assert.deepEqual(load({ env: { KILN_STORE: 'REDIS://cache' } }).store, { kind: 'redis', url: 'REDIS://cache', name: 'default' });
  });

  test('kind: redis takes its URL from KILN_STORE; a source above wins as for any store', () => {
    writeYaml('store:\n  kind: redis\n');
    assert.deepEqual(load({ env: { KILN_STORE: REDIS_URL } }).store, { kind: 'redis', url: REDIS_URL, name: 'default' });
    assert.match(issuesOf(() => load())[0]!.message, /kind is redis but no URL is set \(store\.url, KILN_STORE or --store\)/);
    writeYaml(`store: { url: "${REDIS_URL}" }\n`);
    assert.deepEqual(load({ flags: { store: PG_URL } }).store, { kind: 'postgres', url: PG_URL, schema: 'kiln' });
    assert.deepEqual(load({ flags: { db: 'local.db' } }).store, { kind: 'sqlite', path: join(dir, 'local.db') });
    writeYaml(`store: { url: "${PG_URL}" }\n`);
    assert.deepEqual(load({ env: { KILN_STORE: REDIS_URL } }).store, { kind: 'redis', url: REDIS_URL, name: 'default' });
  });

  test('contradictions with a Redis URL are issues with their lines, and never show the password', () => {
    const file = writeYaml(['store:', '  kind: postgres', `  url: ${REDIS_URL}`, ''].join('\n'));
    const kindIssues = issuesOf(() => load());
    assert.deepEqual(
      kindIssues.map((i) => [i.source, i.path, i.line]),
      [[file, 'store.url', 3]],
      'one issue: the missing postgres URL is not reported again',
    );
    assert.match(kindIssues[0]!.message, /kind is postgres but url selects Redis/);
    writeYaml(['store:', '  path: a.db', `  url: ${REDIS_URL}`, ''].join('\n'));
    assert.match(issuesOf(() => load())[0]!.message, /store\.url \(Redis\) and store\.path \(SQLite\) are both set/);
    writeYaml(['store:', `  url: ${REDIS_URL}`, '  schema: kiln', ''].join('\n'));
    assert.match(issuesOf(() => load())[0]!.message, /schema applies to the postgres store only \(a Redis store is named by the URL's \?name=\)/);
    rmSync(join(dir, 'kiln.yaml'));
    const both = issuesOf(() => load({ flags: { db: 'a.db', store: REDIS_URL } }));
    assert.match(both[0]!.message, /selects Redis but --db names a SQLite file too/);
  });

  test('Redis URLs without a host, with a path that is no database number, or with a bad name are issues', () => {
    assert.match(issuesOf(() => load({ env: { KILN_STORE: 'redis:///0' } }))[0]!.message, /must name a host \(redis:\/\/host:6379\/0\)/);
    assert.match(issuesOf(() => load({ flags: { store: 'redis://:s3cret-pw@h/cache' } }))[0]!.message, /path of a Redis URL is a database number/);
    const name = issuesOf(() => load({ flags: { store: `${REDIS_URL}?name=a%20b` } }))[0]!;
    assert.equal(name.path, '--store');
    assert.match(name.message, /\?name= is the store's name \(1 to 64 of A-Z a-z 0-9 _ \. -\), got "a b"/);
    writeYaml('store:\n  url: "redis://:s3cret-pw@h/x"\n');
    assert.equal(issuesOf(() => load())[0]!.path, 'store.url');
  });
});

describe('store URLs', () => {
  test('redactUrl masks the password and a password query parameter, and leaves other URLs alone', () => {
    assert.equal(redactUrl(PG_URL), 'postgres://kiln:***@db.internal:5432/kiln');
    assert.equal(redactUrl('postgres://kiln@h/db?password=pw&sslmode=require'), 'postgres://kiln@h/db?password=***&sslmode=require');
    assert.equal(redactUrl('postgres://kiln@h:5432/db'), 'postgres://kiln@h:5432/db');
    assert.equal(redactUrl('postgres://kiln:pw@[bad'), 'postgres://kiln:***@[bad');
  });

  test('redactSecrets masks the password wherever a message repeats it, encoded or not', () => {
    const url = 'postgres://kiln:p%40ss@h/db';
    assert.equal(redactSecrets(`failed for ${url}: password p@ss rejected`, url), 'failed for postgres://kiln:***@h/db: password *** rejected');
  });

  test('redactUrl masks a Redis password, with or without a user', () => {
    assert.equal(redactUrl(REDIS_URL), 'redis://:***@cache.internal:6379/2');
    assert.equal(redactUrl('rediss://kiln:pw@h:6380?name=x'), 'rediss://kiln:***@h:6380?name=x');
    assert.equal(redactSecrets(`connect ECONNREFUSED ${REDIS_URL} (s3cret-pw)`, REDIS_URL), 'connect ECONNREFUSED redis://:***@cache.internal:6379/2 (***)');
  });

  test('describeStore names the store without its password', () => {
    assert.equal(describeStore({ kind: 'redis', url: REDIS_URL, name: 'blue' }), 'redis redis://:***@cache.internal:6379/2 (name blue)');
    assert.equal(describeStore({ kind: 'postgres', url: PG_URL, schema: 'kiln' }), 'postgres postgres://kiln:***@db.internal:5432/kiln (schema kiln)');
    assert.equal(describeStore({ kind: 'sqlite', path: '/var/kiln.db' }), 'sqlite /var/kiln.db');
  });

  test('parseStoreSpec accepts postgres://, postgresql://, redis:// and rediss:// URLs and sqlite:<path>, nothing else', () => {
    assert.deepEqual(parseStoreSpec('postgresql://u@h/db'), { kind: 'postgres', url: 'postgresql://u@h/db' });
    assert.deepEqual(parseStoreSpec(' redis://h:6379 '), { kind: 'redis', url: 'redis://h:6379' });
    assert.deepEqual(parseStoreSpec('rediss://h'), { kind: 'redis', url: 'rediss://h' });
    assert.equal(parseStoreSpec('redis+sentinel://h').kind, 'invalid');
    assert.deepEqual(parseStoreSpec('sqlite:/tmp/k.db'), { kind: 'sqlite', path: '/tmp/k.db' });
    assert.equal(parseStoreSpec('sqlite:').kind, 'invalid');
    assert.equal(parseStoreSpec('k.db').kind, 'invalid');
  });
});
