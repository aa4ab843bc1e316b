/**
 * Stage locks with two `kiln worker` processes on one SQLite file (see lock-workers.ts).
 */
import { describe, test } from 'node:test';
import { fiftyRunsNeverOverlap, killedOwnerLosesLock, sqliteWorkspace } from './lock-workers.ts';

/** Bounds a hung child process; the runs themselves take seconds. */
const E2E_TIMEOUT_MS = 150_000;

describe('stage locks on SQLite, two worker processes', () => {
  test('50 runs with one lock key: the stages’ own intervals never overlap and their fences grow', { timeout: E2E_TIMEOUT_MS }, async (t) => {
    await fiftyRunsNeverOverlap(await sqliteWorkspace(t), t);
  });

  test('the lock owner SIGKILLed mid-stage: the other worker takes the lock after its TTL with a higher fence; late renew and release are refused', { timeout: E2E_TIMEOUT_MS }, async (t) => {
    await killedOwnerLosesLock(await sqliteWorkspace(t), t);
  });
});
