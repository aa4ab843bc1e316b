/**
 * Runs the backend conformance suite on the in-memory reference backend.
 */
import { createMemoryBackend } from '../../src/backends/memory/index.ts';
import { describeBackend } from './backend-suite.ts';

describeBackend('memory', {
  create: async ({ clock, ids }) => createMemoryBackend({ clock, ids }),
  destroy: async (backend) => backend.close(),
});
