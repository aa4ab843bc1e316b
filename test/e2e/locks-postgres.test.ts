/**
 * Stage locks with two `kiln worker` processes on one PostgreSQL schema (see lock-workers.ts), on
 * this process's private cluster (or `KILN_PG_URL`). Skipped, with the reason, without PostgreSQL.
 */
import { describe, test } from 'node:test';
import { postgresSkipReason } from '../support/postgres-cluster.ts';
import { fiftyRunsNeverOverlap, killedOwnerLosesLock, postgresWorkspace } from './lock-workers.ts';

/** Bounds a hung child process; the runs themselves take seconds. */
const E2E_TIMEOUT_MS = 150_000;

describe('stage locks on PostgreSQL, two worker processes', { skip: postgresSkipReason() }, () => {
  test('50 runs with one lock key: the stages’ own intervals never overlap and their fences grow', { timeout: E2E_TIMEOUT_MS }, async (t) => {
    await fiftyRunsNeverOverlap(await postgresWorkspace(t), t);
  });

  test('the lock owner SIGKILLed mid-stage: the other worker takes the lock after its TTL with a higher fence; late renew and release are refused', { timeout: E2E_TIMEOUT_MS }, async (t) => {
    await killedOwnerLosesLock(await postgresWorkspace(t), t);
  });
});
