/**
 * `migrate` and `schemaVersion` of the memory store. The state has no schema; one version keeps
 * `migrate` honest about being idempotent and `schemaVersion` honest before the first `migrate`.
 */
import type { MigrationResult, SchemaVersionInfo } from '../../core/ports/store.ts';
import type { MemoryState } from './state.ts';

/** The one schema version of the memory state. */
export const SCHEMA_VERSION = 1;

/** Brings the state to {@link SCHEMA_VERSION}; applies nothing the second time. */
export function applyMigrations(state: MemoryState): MigrationResult {
  if (state.schemaVersion >= SCHEMA_VERSION) return { applied: [], version: state.schemaVersion };
  state.schemaVersion = SCHEMA_VERSION;
  return { applied: [SCHEMA_VERSION], version: SCHEMA_VERSION };
}

/** The state's version next to the one this code knows. */
export function readSchemaVersionInfo(state: MemoryState): SchemaVersionInfo {
  return { current: state.schemaVersion, latest: SCHEMA_VERSION };
}
