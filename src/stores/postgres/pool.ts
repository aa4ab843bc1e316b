/**
 * The connection pool: `pg.Pool` with kiln's settings. A pool survives a server restart by
 * itself — a broken client is discarded and the next checkout connects anew — as long as no
 * connection error goes unhandled: an idle client's error is logged here (it would otherwise
 * crash the process), and clients held by a transaction get a listener while they are held
 * (see `inTransaction` in database.ts).
 */
import pg from 'pg';
import type { Logger } from '../../core/logger.ts';

/** Epoch-ms times, fences and counts are `bigint` columns; all stay below 2^53, so plain numbers. */
const INT8_OID = 20;

/**
 * Type parsers of kiln's pools only (never the process-wide `pg.types`, which other libraries in
 * the same process may rely on): `bigint` as a number; everything else as `pg` parses it
 * (`json` via JSON.parse).
 */
const KILN_TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === INT8_OID && format !== 'binary') return (value: string) => Number(value);
    return format === 'binary' ? pg.types.getTypeParser(oid, 'binary') : pg.types.getTypeParser(oid, 'text');
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/** How long a checkout waits for a connection (a free slot, or the server) before failing. */
export const CONNECT_TIMEOUT_MS = 10_000;

/** Options of {@link createPool}. */
export interface PoolOptions {
  connectionString: string;
  max: number;
  logger: Logger;
}

/** A pool and the server process ids of its live connections (their NOTIFYs are ours). */
export interface KilnPool {
  pool: pg.Pool;
  /** Server pids of this pool's connections: wakes they send were already delivered locally. */
  ownPids: ReadonlySet<number>;
}

/** The server process id of a connected client (`pg` does not type it). */
export function serverPid(client: pg.ClientBase): number | null {
  const pid = (client as unknown as { processID?: unknown }).processID;
  return typeof pid === 'number' ? pid : null;
}

/** Connection settings shared by the pool and the LISTEN client. */
export function clientConfig(connectionString: string): pg.ClientConfig {
  return {
    connectionString,
    types: KILN_TYPES,
    application_name: 'kiln',
    keepAlive: true,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  };
}

/** Creates the pool; connections are opened on demand. */
export function createPool(options: PoolOptions): KilnPool {
  const pool = new pg.Pool({ ...clientConfig(options.connectionString), max: options.max });
  const ownPids = new Set<number>();
  const pidOf = new WeakMap<pg.PoolClient, number>();
  pool.on('connect', (client) => {
    const pid = serverPid(client);
    if (pid === null) return;
    ownPids.add(pid);
    pidOf.set(client, pid);
  });
  pool.on('remove', (client) => {
    const pid = pidOf.get(client);
    if (pid !== undefined) ownPids.delete(pid);
  });
  // An idle client lost its connection (server restart, network): pg-pool has already dropped
  // it; without this listener the 'error' event would crash the process.
  pool.on('error', (err) => {
    options.logger.warn({ err: err.message }, 'postgres: idle connection lost; the pool reconnects on demand');
  });
  return { pool, ownPids };
}
