/**
 * Runs the backend conformance suite on the SQLite backend: every test gets a fresh database
 * file in its own temp directory, closed and deleted by `destroy`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteBackend } from '../../src/backends/sqlite/index.ts';
import type { Backend } from '../../src/core/ports.ts';
import { describeBackend } from './backend-suite.ts';

/** Temp directory of each live backend, so `destroy` can remove it. */
const dirs = new WeakMap<Backend, string>();

describeBackend('sqlite', {
  create: async ({ clock, ids }) => {
    const dir = mkdtempSync(join(tmpdir(), 'kiln-sqlite-conformance-'));
    const backend = createSqliteBackend({ path: join(dir, 'kiln.db'), clock, ids });
    dirs.set(backend, dir);
    return backend;
  },
  destroy: async (backend) => {
    await backend.close();
    const dir = dirs.get(backend);
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  },
});
