/**
 * The `requests` sub-port of the memory store, remembered client requests (`Idempotency-Key`):
 * the first record of a `(scope, key)` is kept for good and handed back to every later request.
 */
import type { RequestRecord, RequestsPort } from '../../core/ports/requests.ts';
import type { MemoryContext } from './context.ts';
import { newRequestRecord, pairKey } from './rows.ts';
import type { MemoryState } from './state.ts';

/** Stores `record` unless `(scope, key)` is known; returns the stored record and whether it is new. */
function rememberRequest(state: MemoryState, record: Omit<RequestRecord, 'createdAt'>): { created: boolean; record: RequestRecord } {
  const id = pairKey(record.scope, record.key);
  const stored = state.requestRecords.get(id);
  if (stored) return { created: false, record: stored };
  const created = newRequestRecord(record, state.clock.now());
  state.requestRecords.set(id, created);
  return { created: true, record: created };
}

/** The stored record of `(scope, key)`, or null. */
function getRequest(state: MemoryState, scope: string, key: string): RequestRecord | null {
  return state.requestRecords.get(pairKey(scope, key)) ?? null;
}

/** Remembered client requests of the state. */
export function createRequestsPort(ctx: MemoryContext): RequestsPort {
  const { state } = ctx;
  return {
    remember: ctx.atomic((record) => rememberRequest(state, record)),
    get: ctx.atomic((scope, key) => getRequest(state, scope, key)),
  };
}
