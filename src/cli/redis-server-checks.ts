/**
 * `kiln doctor`'s rows about a Redis server: its version (kiln needs >= 7.0), its persistence
 * (which acknowledged commits survive a crash: the README's "Redis store" section) and its
 * eviction policy (an evicting Redis silently deletes jobs). The settings are read by the Redis
 * store's `server-settings.ts`, loaded only when the store is Redis.
 */
// Type-only: erased at run time, so ioredis is loaded only when a Redis store is checked.
import type { RedisServerSettings as RedisSettingsView } from '../stores/redis/server-settings.ts';
import { CheckStatus, type DoctorCheck, type ServerChecks } from './doctor-checks.ts';

/** The oldest Redis kiln runs on (its scripts use Redis 7 commands and replies). */
export const MIN_REDIS_VERSION: readonly [number, number] = [7, 0];

/** The names of the rows, in order. */
export const REDIS_CHECK_NAMES = ['redis version', 'persistence', 'eviction'] as const;

const AOF_ACTION = 'set appendonly yes and appendfsync everysec (or always) in redis.conf (CONFIG SET appendonly yes, then CONFIG REWRITE): see the README, "Redis store"';

function versionCheck(version: string): DoctorCheck {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const [minMajor, minMinor] = MIN_REDIS_VERSION;
  if (major > minMajor || (major === minMajor && minor >= minMinor)) return { name: 'redis version', status: CheckStatus.ok, result: `Redis ${version}`, action: null };
  return {
    name: 'redis version',
    status: CheckStatus.fail,
    result: `Redis ${version}: kiln needs Redis >= ${minMajor}.${minMinor}`,
    action: `upgrade the server to Redis ${minMajor}.${minMinor} or later`,
  };
}

/** What a restart or crash loses under these settings, and whether that is worth a warning. */
function persistenceCheck(s: RedisSettingsView): DoctorCheck {
  const name = 'persistence';
  const cannotTell = `cannot tell: CONFIG GET is refused (${s.configRefused ?? ''})`;
  if (s.aofEnabled) {
    if (s.appendfsync === 'always') return { name, status: CheckStatus.ok, result: 'AOF, appendfsync always: every acknowledged commit survives a crash or power loss', action: null };
    if (s.appendfsync === 'everysec') {
      const result = 'AOF, appendfsync everysec: a crash or power loss may lose up to ~2 s of acknowledged commits (a crash only while a slow disk delays the AOF)';
      return { name, status: CheckStatus.ok, result, action: null };
    }
    if (s.appendfsync === null) {
      return { name, status: CheckStatus.warn, result: `AOF on, fsync policy unknown (${cannotTell})`, action: 'check appendfsync is always or everysec on the server, or grant this user +config|get' };
    }
    return { name, status: CheckStatus.warn, result: `AOF, appendfsync ${s.appendfsync}: the OS decides when commits reach the disk (a power loss may lose many seconds of them)`, action: AOF_ACTION };
  }
  if (s.save === null) {
    return { name, status: CheckStatus.warn, result: `AOF off; whether RDB snapshots are on ${cannotTell}`, action: AOF_ACTION };
  }
  const result = s.save.trim() === '' ? 'off (no AOF, no RDB snapshots): a restart loses every run, job and lease' : `RDB snapshots only (save ${s.save}): a restart loses every commit since the last snapshot`;
  return { name, status: CheckStatus.warn, result, action: AOF_ACTION };
}

function evictionCheck(s: RedisSettingsView): DoctorCheck {
  const name = 'eviction';
  if (s.maxmemoryPolicy === 'noeviction') {
    return { name, status: CheckStatus.ok, result: 'maxmemory-policy noeviction: a full server refuses writes (kiln retries) and deletes nothing', action: null };
  }
  const action = 'set maxmemory-policy noeviction (CONFIG SET maxmemory-policy noeviction, then CONFIG REWRITE), or give kiln a Redis of its own';
  if (s.maxmemoryBytes > 0) {
    return { name, status: CheckStatus.fail, result: `maxmemory-policy ${s.maxmemoryPolicy} with maxmemory ${s.maxmemoryBytes} bytes: when full, Redis silently deletes keys, jobs and runs among them`, action };
  }
  return { name, status: CheckStatus.warn, result: `maxmemory-policy ${s.maxmemoryPolicy} (no maxmemory set yet): once a limit is set, Redis silently deletes keys, jobs and runs among them`, action };
}

/** The rows for a server's settings. */
export function redisServerChecks(settings: RedisSettingsView): DoctorCheck[] {
  return [versionCheck(settings.version), persistenceCheck(settings), evictionCheck(settings)];
}

/** The doctor's server checks of the Redis store at `url` (its own connection, bounded by `timeoutMs`). */
export function redisServerCheckSet(url: string, timeoutMs: number): ServerChecks {
  return {
    names: REDIS_CHECK_NAMES,
    async run() {
      const { readServerSettings } = await import('../stores/redis/server-settings.ts');
      return redisServerChecks(await readServerSettings(url, timeoutMs));
    },
  };
}
