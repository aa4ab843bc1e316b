/**
 * Runs the store conformance suite on the SQLite store: every test gets a fresh database
 * file in its own temp directory, closed and deleted by `destroy`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { describeStoreSuite } from './store-suite.ts';

/** Temp directory of each live store, so `destroy` can remove it. */
const dirs = new WeakMap<Store, string>();

describeStoreSuite('sqlite', {
  create: async ({ clock, ids }) => {
    const dir = mkdtempSync(join(tmpdir(), 'kiln-sqlite-conformance-'));
    const store = createSqliteStore({ path: join(dir, 'kiln.db'), clock, ids });
    dirs.set(store, dir);
    return store;
  },
  destroy: async (store) => {
    await store.close();
    const dir = dirs.get(store);
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  },
});
