/**
 * What every sub-port of the Redis store shares: the connection, the key prefix, the id source,
 * the time argument, the scripts, wake delivery, and the one wrapper every public method goes
 * through (refused after `close()` and before the schema is current, errors passed through
 * `mapError`, so no driver error escapes).
 *
 * Scripts: every `routines/<name>.lua` is one atomic port method (or one shared move), loaded
 * with every `routines/lib-*.lua` in front of it, and called with ONE key (the prefix) and
 * ARGV[1] = the time argument; see lib-keys.lua for the layout and conventions.
 */
import { createStoreLifecycle, type StoreLifecycle } from '../shared/store-lifecycle.ts';
import type { Redis } from 'ioredis';
import type { Clock } from '../../core/clock.ts';
import { SchemaVersionError, StoreUnavailableError } from '../../core/errors.ts';
import type { IdGenerator } from '../../core/ids.ts';
import type { Logger } from '../../core/logger.ts';
import { closedStoreError, mapError, scriptError, type ScriptFailure } from './errors.ts';
import { latestSchemaVersion, readSchemaVersion } from './migrate.ts';
import { routineSource } from './routines.ts';

/** One argument of a script (ARGV[2] on): text, a number written as decimal text, or bytes (binary-safe). */
export type ScriptArg = string | number | Buffer;

/** The answer of a script, as lib-keys.lua's ok() / fail() encode it. */
type ScriptAnswer<T> = { ok: T } | { err: ScriptFailure };

/** Shared state of one store instance. */
export interface RedisContext extends StoreLifecycle {
  /** The command connection. */
  readonly redis: Redis;
  /** KEYS[1] of every script: `<name>:{<name>}:`-style prefix, ending in `:`. */
  readonly prefix: string;
  readonly ids: IdGenerator;
  /** ARGV[1] of every script: the injected clock's time (tests), or '' for the server's TIME. */
  nowArg(): string;
  /**
   * Runs `routines/<name>.lua` as one atomic unit with `args` as ARGV[2..]; resolves with its
   * `ok` value, or rejects with the kiln error of its `err` answer.
   */
  call<T>(name: string, args?: readonly ScriptArg[]): Promise<T>;
  /**
   * Runs `routines/<name>.lua` like {@link RedisContext.call}, for a script that answers a
   * native array instead of ok()'s JSON (a hot path sparing cjson): resolves with the array as
   * ioredis gives it (text, null for a Lua false, nested arrays), or rejects with the kiln error
   * of a fail() answer (JSON text).
   */
  callReply<T>(name: string, args?: readonly ScriptArg[]): Promise<T>;
  /**
   * Runs `routines/<name>.lua` like {@link RedisContext.callReply}, through ioredis's Buffer
   * variant: every bulk string of the reply is a Buffer (for a script answering binary bytes).
   */
  callBufferReply<T>(name: string, args?: readonly ScriptArg[]): Promise<T>;
  /** Closes the command connection and the submissions' one, if opened. */
  closeConnections(): Promise<void>;
  /** Wakes listeners of this process and of every other process on the store (a hint only). */
  wake(queues: Iterable<string>): void;
  /** Wakes listeners of this process only, after a script published the wake itself (publish_wake in lib-keys.lua). */
  wakeLocal(queues: readonly string[]): void;
  /** The origin a script's published wake carries (an ARGV of those scripts), so this process skips its own. */
  readonly wakeOrigin: string;
}

/** What {@link createContext} needs; `clock` is the test seam (see `index.ts`), undefined in production. */
export interface RedisContextDeps {
  redis: Redis;
  prefix: string;
  ids: IdGenerator;
  clock: Clock | undefined;
  deliverWakes: (queues: Iterable<string>) => void;
  deliverLocalWakes: (queues: readonly string[]) => void;
  wakeOrigin: string;
  logger: Logger;
}

/** Builds the context of one store instance. */
export function createContext(deps: RedisContextDeps): RedisContext {
  const { redis, prefix, clock } = deps;

  /** A connection scripts run on: the commands defined on it, and whether it was ever up. */
  interface Lane {
    conn: Redis;
    defined: Set<string>;
    everReady: boolean;
  }
  const laneOf = (conn: Redis): Lane => {
    const lane: Lane = { conn, defined: new Set(), everReady: conn.status === 'ready' };
    if (!lane.everReady) conn.once('ready', () => (lane.everReady = true));
    return lane;
  };
  const main = laneOf(redis);
  // Submissions get a connection of their own, opened by the first one: Redis runs a connection's
  // commands in order, so on the shared connection an API submit waited behind every claim and
  // commit script the process's worker had sent before it (5-stage chains, each submitted and
  // awaited, alternating A/B: 9 of 11 rounds faster, median gain 10%).
  let submits: Lane | undefined;
  const laneFor = (name: string): Lane => {
    if (name !== 'jobs-submit') return main;
    if (submits === undefined) {
      const conn = redis.duplicate();
      // Logged as the other connections' are: a server that refuses this one (maxclients) must show.
      conn.on('error', (err: Error) => deps.logger.debug({ err: err.message }, 'redis submit connection error'));
      submits = laneOf(conn);
    }
    return submits;
  };

  const commandOf = (lane: Lane, name: string): string => {
    const command = `kiln_${name.replace(/[^A-Za-z0-9]/g, '_')}`;
    if (!lane.defined.has(command)) {
      const lua = routineSource(name);
      if (lua === undefined) throw new Error(`redis store: no routine ${name}.lua`);
      lane.conn.defineCommand(command, { numberOfKeys: 1, lua });
      lane.defined.add(command);
    }
    return command;
  };

  const nowArg = clock === undefined ? () => '' : () => String(clock.now());

  /**
   * Runs a script with the prefix and the time argument in front of `args`; its raw reply (bulk
   * strings as Buffers when `buffers`, through the `<command>Buffer` variant ioredis defines).
   * Once its connection has been up, a script sent while it is down fails at once (retryable)
   * instead of waiting in ioredis's offline queue for its reconnect attempts (about 750 ms a call
   * while redis-server is away): callers retry transient errors themselves. Before the first
   * connection, calls wait for it as usual (a process starting next to its Redis).
   */
  const runScript = <T>(name: string, args: readonly ScriptArg[] = [], buffers = false): Promise<T> => {
    const lane = laneFor(name);
    if (lane.everReady && lane.conn.status !== 'ready') {
      return Promise.reject(new StoreUnavailableError(`redis unavailable: the connection is ${lane.conn.status}`));
    }
    const command = `${commandOf(lane, name)}${buffers ? 'Buffer' : ''}`;
    const run = (lane.conn as unknown as Record<string, (...a: ScriptArg[]) => Promise<T>>)[command];
    if (run === undefined) throw new Error(`redis store: command ${command} was not defined`);
    return run.call(lane.conn, prefix, nowArg(), ...args);
  };

  const lifecycle = createStoreLifecycle({
    async checkSchema() {
      const version = await readSchemaVersion(redis, prefix);
      if (version > latestSchemaVersion()) {
        throw new SchemaVersionError(`redis store ${prefix} is at version ${version}, newer than this code's ${latestSchemaVersion()}`, {
          details: { prefix, version, latest: latestSchemaVersion() },
        });
      }
      if (version < latestSchemaVersion()) {
        throw new SchemaVersionError(`redis store ${prefix} is at version ${version}, older than ${latestSchemaVersion()}: call migrate() first`, {
          details: { prefix, version, required: latestSchemaVersion() },
        });
      }
    },
    mapError,
    closedError: closedStoreError,
  });

  return {
    redis,
    prefix,
    ids: deps.ids,
    nowArg,
    async call<T>(name: string, args: readonly ScriptArg[] = []): Promise<T> {
      const text = await runScript<string>(name, args);
      const answer = JSON.parse(text) as ScriptAnswer<T>;
      if ('err' in answer) throw scriptError(answer.err);
      return answer.ok;
    },
    async callReply<T>(name: string, args: readonly ScriptArg[] = []): Promise<T> {
      const reply = await runScript<T | string>(name, args);
      if (typeof reply === 'string') throw scriptError((JSON.parse(reply) as { err: ScriptFailure }).err);
      return reply;
    },
    async callBufferReply<T>(name: string, args: readonly ScriptArg[] = []): Promise<T> {
      const reply = await runScript<T | Buffer>(name, args, true);
      if (Buffer.isBuffer(reply)) throw scriptError((JSON.parse(reply.toString('utf8')) as { err: ScriptFailure }).err);
      return reply;
    },
    async closeConnections() {
      const conns = submits === undefined ? [redis] : [submits.conn, redis];
      await Promise.all(conns.map((conn) => conn.quit().catch(() => conn.disconnect())));
    },
    wake: deps.deliverWakes,
    wakeLocal: deps.deliverLocalWakes,
    wakeOrigin: deps.wakeOrigin,
    ...lifecycle,
  };
}
