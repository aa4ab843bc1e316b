/**
 * The QR bench's WAL sampler (bench/qr/wal-pages.ts) on a real SQLite file: it counts the commits
 * made after it started, across a checkpoint that restarts the log, and gives a hash-keyed index
 * about a page per row written and an append-only table about a page per commit.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { startWalSampler } from '../../bench/qr/wal-pages.ts';

const dir = mkdtempSync(join(tmpdir(), 'kiln-wal-pages-'));
after(() => rmSync(dir, { recursive: true, force: true }));

it('counts only the commits after its start, a random-key index at about a page per row and an append-only table at a page per commit', () => {
  const path = join(dir, 'wal.db');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE hashed (k TEXT PRIMARY KEY) WITHOUT ROWID; CREATE TABLE appended (id INTEGER PRIMARY KEY, v TEXT)');
  const putHashed = db.prepare('INSERT INTO hashed (k) VALUES (?)');
  const putAppended = db.prepare('INSERT INTO appended (v) VALUES (?)');
  // Enough keys for hundreds of leaves, so new random keys rarely share one.
  db.transaction(() => {
    for (let i = 0; i < 30_000; i++) putHashed.run(randomBytes(16).toString('hex'));
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  // Written before the sampler starts: not counted.
  db.transaction(() => putAppended.run('before'))();

  const sampler = startWalSampler(path, 60_000);
  const commits = 40;
  for (let c = 0; c < commits; c++) {
    db.transaction(() => {
      for (let r = 0; r < 3; r++) putHashed.run(randomBytes(16).toString('hex'));
      putAppended.run(`row ${c}`);
    })();
  }
  const pages = sampler.stop(50);
  db.close();

  assert.ok(pages, 'commits were seen');
  assert.equal(pages.commits, commits);
  assert.equal(pages.pageSize, 4096);
  const perCommit = (owner: string): number => pages.byOwner.find((o) => o.owner === owner)?.perCommit ?? 0;
  // Three random keys a commit land on three leaves (now and then two), plus a leaf's new sibling
  // when one splits: at least ~a page per row, never shared between commits.
  assert.ok(perCommit('hashed') > 2.5 && perCommit('hashed') <= 6, `hashed leaves per commit: ${perCommit('hashed')}`);
  assert.equal(perCommit('appended'), 1);
  const total = pages.byOwner.reduce((sum, o) => sum + o.perCommit, 0);
  assert.ok(Math.abs(total - pages.framesPerCommit) < 0.05, `${total} of ${pages.framesPerCommit} pages attributed`);
});

it('counts the commits on both sides of a checkpoint that restarts the log', async () => {
  const path = join(dir, 'restart.db');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE appended (id INTEGER PRIMARY KEY, v TEXT)');
  const put = db.transaction((v: string) => db.prepare('INSERT INTO appended (v) VALUES (?)').run(v));
  const sampler = startWalSampler(path, 5);
  for (let c = 0; c < 10; c++) put(`before ${c}`);
  // The sampler reads these, then the log starts over (a new generation, new salts) shorter than
  // where it had read to: the next frames must be read from its start.
  await delay(100);
  db.pragma('wal_checkpoint(TRUNCATE)');
  for (let c = 0; c < 7; c++) put(`after ${c}`);
  const pages = sampler.stop();
  db.close();
  assert.equal(pages?.commits, 17);
});
