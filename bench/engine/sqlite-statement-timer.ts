/**
 * Times every better-sqlite3 statement call (`run`, `get`, `all`, including the BEGIN, COMMIT and
 * SAVEPOINT statements of `db.transaction`) by its SQL text, for `npm run bench -- engine
 * --sql-statements`: where a SQLite transition's time goes, as statement time per transition, a
 * count this shared machine's load moves far less than runs/s. It wraps the methods of the
 * driver's Statement prototype, so it sees the store's statements without touching the store;
 * its own cost is under 0.2 µs a call (a 0.5 µs primary-key read measured 0.45 -> 0.61 µs).
 */
import Database from 'better-sqlite3';
import { performance } from 'node:perf_hooks';

/** One statement's calls over the timed phase. */
export interface StatementTime {
  /** The SQL text, whitespace collapsed, cut at 100 characters. */
  sql: string;
  calls: number;
  totalMs: number;
}

/** A running timer: `stop` restores the driver and returns the times since the start, longest first. */
export interface StatementTimer {
  stop(): StatementTime[];
}

/** What a result carries of the timed statements (`extra.sqlStatements`), per stage transition. */
export interface StatementReport {
  usPerTransition: number;
  /** The costliest statements, which hold nearly all of the time. */
  top: { sql: string; calls: number; usPerTransition: number }[];
}

/** Statements a report lists. */
const TOP_STATEMENTS = 20;

/** `times` over `transitions` stage transitions, as µs per transition. */
export function statementReport(times: readonly StatementTime[], transitions: number): StatementReport {
  const perTransition = (ms: number): number => Math.round((ms * 1000 * 10) / transitions) / 10;
  return {
    usPerTransition: perTransition(times.reduce((sum, t) => sum + t.totalMs, 0)),
    top: times.slice(0, TOP_STATEMENTS).map((t) => ({ sql: t.sql, calls: t.calls, usPerTransition: perTransition(t.totalMs) })),
  };
}

const METHODS = ['run', 'get', 'all'] as const;

/** Starts timing every statement of every better-sqlite3 connection in this process. */
export function startStatementTimer(): StatementTimer {
  const probe = new Database(':memory:');
  const proto = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, (...args: unknown[]) => unknown>;
  probe.close();
  const times = new Map<string, StatementTime>();
  // Each prepared statement finds its entry once; statements of the same text share one.
  const entries = new WeakMap<object, StatementTime>();
  const entryOf = (statement: { source: string }): StatementTime => {
    let time = entries.get(statement);
    if (time === undefined) {
      const sql = statement.source.replace(/\s+/g, ' ').trim().slice(0, 100);
      time = times.get(sql);
      if (time === undefined) times.set(sql, (time = { sql, calls: 0, totalMs: 0 }));
      entries.set(statement, time);
    }
    return time;
  };
  const originals = METHODS.map((name) => [name, proto[name]] as const);
  for (const [name, original] of originals) {
    if (original === undefined) continue;
    proto[name] = function timed(this: { source: string }, ...args: unknown[]): unknown {
      const t0 = performance.now();
      try {
        return original.apply(this, args);
      } finally {
        const time = entryOf(this);
        time.calls++;
        time.totalMs += performance.now() - t0;
      }
    };
  }
  return {
    stop: () => {
      for (const [name, original] of originals) if (original !== undefined) proto[name] = original;
      return [...times.values()].sort((a, b) => b.totalMs - a.totalMs);
    },
  };
}
