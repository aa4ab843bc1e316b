/**
 * `migrate` and `schemaVersion` of the Redis store. Redis has no schema: the layout lives in the
 * scripts (routines/lib-keys.lua). The version, recorded in the prefix's `meta` hash, says which
 * layout the keys follow, so a kiln that knows an older layout refuses a newer one, and a later
 * layout change ships as a numbered step in {@link MIGRATIONS} applied by one script each.
 */
import type { Redis } from 'ioredis';
import type { MigrationResult, SchemaVersionInfo } from '../../core/ports/store.ts';

/**
 * The layout versions, in order; each applied once by an atomic script step. Version 2 builds the
 * fair-claim entries (tready, tenants, retries: lib-keys.lua) of the ready jobs stored before.
 */
const MIGRATIONS: readonly { version: number; name: string }[] = [
  { version: 1, name: 'initial_layout' },
  { version: 2, name: 'fair_claim_indexes' },
];

/** The highest layout version this code knows. */
export function latestSchemaVersion(): number {
  return MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;
}

/** The version recorded under `prefix`, 0 when it was never migrated. */
export async function readSchemaVersion(redis: Redis, prefix: string): Promise<number> {
  const value = await redis.hget(`${prefix}meta`, 'schema_version');
  return value === null ? 0 : Number(value);
}

/** The store's version next to the newest this code knows; changes nothing. */
export async function schemaVersionInfo(redis: Redis, prefix: string): Promise<SchemaVersionInfo> {
  return { current: await readSchemaVersion(redis, prefix), latest: latestSchemaVersion() };
}

/**
 * Brings the layout up to {@link latestSchemaVersion} in one atomic step (a script comparing and
 * setting `schema_version`), so processes migrating at once see it applied once. A layout change
 * would add its key rewrites to that step. A newer layout is left alone (the context refuses it).
 */
export async function applyMigrations(redis: Redis, prefix: string, nowMs: number): Promise<MigrationResult> {
  const latest = latestSchemaVersion();
  const before = Number(await redis.eval(MIGRATE_SCRIPT, 1, `${prefix}meta`, String(latest), String(nowMs)));
  const applied = MIGRATIONS.filter((m) => m.version > before && m.version <= latest).map((m) => m.version);
  return { applied, version: Math.max(before, latest) };
}

/**
 * KEYS[1] = meta hash, ARGV = latest version, now; returns the version found before. From a
 * version below 2 with jobs (a store of layout 1), every ready job gets its fair-claim entries
 * (the keys spelled as in lib-keys.lua; the prefix is the meta key's without 'meta').
 */
const MIGRATE_SCRIPT = `
local current = tonumber(redis.call('HGET', KEYS[1], 'schema_version') or '0')
if current >= 1 and current < 2 then
  local P = string.sub(KEYS[1], 1, #KEYS[1] - 4)
  for _, queue in ipairs(redis.call('SMEMBERS', P .. 'queues')) do
    for _, priority in ipairs(redis.call('ZRANGE', P .. 'prios:' .. queue, 0, -1)) do
      local ready = redis.call('ZRANGE', P .. 'ready:' .. queue .. ':' .. priority, 0, -1, 'WITHSCORES')
      for i = 1, #ready, 2 do
        local f = redis.call('HMGET', P .. 'job:' .. ready[i], 'tenant', 'attempt')
        local tag = f[1] and ('+' .. f[1]) or '-'
        redis.call('ZADD', P .. 'tready:' .. queue .. ':' .. priority .. ':' .. tag, ready[i + 1], ready[i])
        redis.call('ZADD', P .. 'tenants:' .. queue .. ':' .. priority, 0, tag)
        if tonumber(f[2] or '0') >= 1 then redis.call('ZADD', P .. 'retries:' .. queue .. ':' .. priority, ready[i + 1], ready[i]) end
      end
    end
  end
end
if current < tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], 'schema_version', ARGV[1], 'migrated_at', ARGV[2])
end
return current`;
