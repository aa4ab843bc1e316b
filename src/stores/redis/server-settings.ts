/**
 * What a Redis server says about the settings kiln's durability depends on, for `kiln doctor`:
 * its version, whether and how it persists (AOF and its fsync policy, RDB snapshots) and what it
 * does when memory runs out (an evicting server deletes keys, jobs among them, without a word).
 * Read-only: `INFO` (server, persistence, memory) and `CONFIG GET`. An ACL may refuse `CONFIG`;
 * then only what `INFO` tells is known (AOF on or off, the eviction policy, not the fsync policy
 * nor the snapshot rules) and {@link RedisServerSettings.configRefused} says why.
 */
import { Redis } from 'ioredis';
import { mapError } from './errors.ts';

/** The settings read from one server; `null` where the server would not say. */
export interface RedisServerSettings {
  /** `redis_version` of `INFO server`, e.g. `7.0.15`. */
  version: string;
  /** `aof_enabled` of `INFO persistence`. */
  aofEnabled: boolean;
  /** `appendfsync` (`always`, `everysec`, `no`); null when `CONFIG GET` was refused. */
  appendfsync: string | null;
  /** `save` (RDB snapshot rules, `''` when off); null when `CONFIG GET` was refused. */
  save: string | null;
  /** `maxmemory_policy` of `INFO memory`, e.g. `noeviction`, `allkeys-lru`. */
  maxmemoryPolicy: string;
  /** `maxmemory` in bytes of `INFO memory`; 0 means no limit (nothing is ever evicted). */
  maxmemoryBytes: number;
  /** The server's answer when it refused `CONFIG GET` (e.g. `NOPERM ...`); null when it answered. */
  configRefused: string | null;
}

/** The `key:value` lines of an `INFO` reply. */
export function parseInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return fields;
}

/** `CONFIG GET a b c` as a map (Redis 7 takes several parameters), or the refusal's text. */
async function configGet(redis: Redis, names: readonly string[]): Promise<Map<string, string> | string> {
  try {
    const flat = (await redis.call('CONFIG', 'GET', ...names)) as string[];
    const values = new Map<string, string>();
    for (let i = 0; i + 1 < flat.length; i += 2) values.set(String(flat[i]), String(flat[i + 1]));
    return values;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    // An ACL refusal, or a managed Redis that renamed CONFIG away: the caller says it cannot tell.
    if (/^(NOPERM|ERR unknown command)/.test(message)) return message;
    throw err;
  }
}

/**
 * Connects to `url` with a connection of its own (closed before returning), reads the settings
 * and returns them. Throws kiln errors (`StoreUnavailableError` when the server cannot be reached
 * within `timeoutMs`).
 */
export async function readServerSettings(url: string, timeoutMs: number): Promise<RedisServerSettings> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: timeoutMs, commandTimeout: timeoutMs, retryStrategy: () => null });
  // Errors surface through the commands below; an unhandled 'error' event would crash the process.
  redis.on('error', () => {});
  try {
    await redis.connect();
    const info = parseInfo(await redis.info());
    const config = await configGet(redis, ['appendfsync', 'save']);
    const known = typeof config === 'string' ? undefined : config;
    return {
      version: info.get('redis_version') ?? 'unknown',
      aofEnabled: info.get('aof_enabled') === '1',
      appendfsync: known?.get('appendfsync') ?? null,
      save: known?.get('save') ?? null,
      maxmemoryPolicy: info.get('maxmemory_policy') ?? 'unknown',
      maxmemoryBytes: Number(info.get('maxmemory') ?? '0'),
      configRefused: typeof config === 'string' ? config : null,
    };
  } catch (err) {
    throw mapError(err);
  } finally {
    redis.disconnect();
  }
}
