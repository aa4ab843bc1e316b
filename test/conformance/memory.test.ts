/**
 * Runs the store conformance suite on the in-memory reference store.
 */
import { createMemoryStore } from '../../src/stores/memory/index.ts';
import { describeStoreSuite } from './store-suite.ts';

describeStoreSuite('memory', {
  create: async ({ clock, ids }) => createMemoryStore({ clock, ids }),
  destroy: async (store) => store.close(),
});
