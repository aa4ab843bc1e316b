import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { StoreKind, templateProblems } from '../support/store-template.ts';

const STORES_DIR = fileURLToPath(new URL('../../src/stores/', import.meta.url));

/** Every store folder and its kind; `shared/` is code the stores share, not a store. */
const STORES: readonly { name: string; kind: StoreKind }[] = [
  { name: 'memory', kind: StoreKind.memory },
  { name: 'sqlite', kind: StoreKind.sql },
  { name: 'postgres', kind: StoreKind.sql },
  { name: 'redis', kind: StoreKind.script },
];

describe('store template', () => {
  for (const { name, kind } of STORES) {
    test(`src/stores/${name} has every template file`, () => {
      assert.deepEqual(templateProblems(join(STORES_DIR, name), kind), []);
    });
  }

  test('a store folder that lacks a template file is reported by name', (t) => {
    const copy = mkdtempSync(join(tmpdir(), 'kiln-template-'));
    t.after(() => rmSync(copy, { recursive: true, force: true }));
    cpSync(join(STORES_DIR, 'sqlite'), copy, { recursive: true });
    rmSync(join(copy, 'requests.ts'));
    rmSync(join(copy, 'sql', 'cache.ts'));
    assert.deepEqual(templateProblems(copy, StoreKind.sql), ['missing requests.ts', 'missing sql/cache.ts']);
  });
});
