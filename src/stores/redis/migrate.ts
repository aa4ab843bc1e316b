/**
 * `migrate` and `schemaVersion` of the Redis store. Redis has no schema: the layout lives in the
 * scripts (routines/lib-keys.lua). The version, recorded in the prefix's `meta` hash, says which
 * layout the keys follow, so a kiln that knows an older layout refuses a newer one, and a later
 * layout change ships as a numbered step in {@link MIGRATIONS} applied by one script each.
 */
import type { Redis } from 'ioredis';
import type { MigrationResult, SchemaVersionInfo } from '../../core/ports/store.ts';

/**
 * The layout versions, in order; each applied once by an atomic script step. 2 adds the
 * inflight:<tenant> sets (lib-keys.lua) that admission counts; the step fills them from the runs
 * queued or running, so a store written by an older kiln counts those too.
 */
const MIGRATIONS: readonly { version: number; name: string }[] = [
  { version: 1, name: 'initial_layout' },
  { version: 2, name: 'index_runs_in_flight' },
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
  const before = Number(await redis.eval(MIGRATE_SCRIPT, 1, prefix, String(latest), String(nowMs)));
  const applied = MIGRATIONS.filter((m) => m.version > before && m.version <= latest).map((m) => m.version);
  return { applied, version: Math.max(before, latest) };
}

/**
 * KEYS[1] = the store's prefix, ARGV = latest version, now; returns the version found before.
 * Step 2 (from 1: a fresh store has no runs) puts every queued or running run in the inflight set
 * of its tenant (key names as lib-keys.lua spells them), in one pass over 'runs'.
 */
const MIGRATE_SCRIPT = `
local P = KEYS[1]
local current = tonumber(redis.call('HGET', P .. 'meta', 'schema_version') or '0')
if current == 1 and tonumber(ARGV[1]) >= 2 then
  for _, id in ipairs(redis.call('ZRANGE', P .. 'runs', 0, -1)) do
    local f = redis.call('HMGET', P .. 'run:' .. id, 'status', 'tenant')
    if f[1] == 'queued' or f[1] == 'running' then
      redis.call('SADD', f[2] and (P .. 'inflight:' .. f[2]) or (P .. 'inflight'), id)
    end
  end
end
if current < tonumber(ARGV[1]) then
  redis.call('HSET', P .. 'meta', 'schema_version', ARGV[1], 'migrated_at', ARGV[2])
end
return current`;
