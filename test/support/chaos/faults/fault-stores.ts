/**
 * The stores the fault scenarios run on: the end-to-end tests' store of each kind
 * (test/e2e/qr-stores.ts: a SQLite file in the scenario's directory, a schema of its own on this
 * process's PostgreSQL, a store name of its own on this process's redis-server), migrated. Each
 * can be connected to several times (in-process kilns sharing it) and handed to spawned `kiln`
 * processes (`args`, `env`).
 */
import type { Store } from '../../../../src/core/ports/store.ts';
import { e2eStoreCase } from '../../../e2e/qr-stores.ts';

/** The store kinds a scenario runs on. */
export type FaultStoreKind = 'sqlite' | 'postgres' | 'redis';

/** One scenario's store, migrated. */
export interface FaultStore {
  kind: FaultStoreKind;
  /** A new connection (the caller closes it). */
  connect(): Store;
  /** Flags that point a `kiln` command at the store. */
  args: string[];
  /** Environment a `kiln` command needs on top. */
  env: Record<string, string>;
  /** Drops what the scenario stored. */
  destroy(): Promise<void>;
}

/** Opens and migrates the scenario's store (a SQLite file goes in `dir`). */
export async function openFaultStore(kind: FaultStoreKind, dir: string): Promise<FaultStore> {
  const storeCase = e2eStoreCase(kind);
  if (storeCase.skip !== undefined) throw new Error(`store ${kind} is not available here: ${storeCase.skip}`);
  const { connect, args, env, destroy } = await storeCase.open(dir);
  return { kind, connect, args, env, destroy };
}
