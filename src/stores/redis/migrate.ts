/**
 * `migrate` and `schemaVersion` of the Redis store. Redis has no schema: the layout lives in the
 * scripts (routines/lib-keys.lua). The version, recorded in the prefix's `meta` hash, says which
 * layout the keys follow, so a kiln that knows an older layout refuses a newer one, and a later
 * layout change ships as a numbered step in {@link MIGRATIONS} applied by one script each.
 */
import type { Redis } from 'ioredis';
import type { MigrationResult, SchemaVersionInfo } from '../../core/ports/store.ts';
import { routineSource } from './routines.ts';

/**
 * The layout versions, in order; each applied once by an atomic script step: `routine` (a
 * routines/*.lua file, with the libs) moves a store at the version before to this one.
 */
const MIGRATIONS: readonly { version: number; name: string; routine?: string }[] = [
  { version: 1, name: 'initial_layout' },
  // The claim no longer writes the stage record: reads derive it from the leased job.
  { version: 2, name: 'stage_leases_on_jobs', routine: 'migrate-2-stage-leases' },
  // inflight:<tenant> sets, which admission counts, filled for the runs queued or running.
  { version: 3, name: 'index_runs_in_flight', routine: 'migrate-3-runs-in-flight' },
  // finished:<status> and requests:created, which retention walks, filled for older runs and records.
  { version: 4, name: 'index_for_retention', routine: 'migrate-4-retention-indexes' },
  // The fair-claim entries (tready, tenants, retries) of the jobs ready before.
  { version: 5, name: 'fair_claim_indexes', routine: 'migrate-5-fair-claim-indexes' },
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
 * Brings the layout up to {@link latestSchemaVersion}: each step with a routine, in order, is one
 * atomic script that applies only to a store at the version before it (so processes migrating at
 * once see it applied once); then one script sets the version of a store that had none (a new
 * store has no keys to rewrite). A newer layout is left alone (the context refuses it).
 */
export async function applyMigrations(redis: Redis, prefix: string, nowMs: number): Promise<MigrationResult> {
  const latest = latestSchemaVersion();
  const found = await readSchemaVersion(redis, prefix);
  for (const step of MIGRATIONS) {
    if (step.routine === undefined || step.version <= found || step.version > latest) continue;
    const lua = routineSource(step.routine);
    if (lua === undefined) throw new Error(`redis store: no routine ${step.routine}.lua`);
    await redis.eval(lua, 1, prefix, '', String(nowMs));
  }
  const before = Number(await redis.eval(MIGRATE_SCRIPT, 1, `${prefix}meta`, String(latest), String(nowMs)));
  const from = Math.min(found, before);
  const applied = MIGRATIONS.filter((m) => m.version > from && m.version <= latest).map((m) => m.version);
  return { applied, version: Math.max(before, latest) };
}

/** KEYS[1] = meta hash, ARGV = latest version, now; returns the version found before. */
const MIGRATE_SCRIPT = `
local current = tonumber(redis.call('HGET', KEYS[1], 'schema_version') or '0')
if current < tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], 'schema_version', ARGV[1], 'migrated_at', ARGV[2])
end
return current`;
