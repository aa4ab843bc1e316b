/**
 * Remembered client requests (`Idempotency-Key`) of the memory store: the first record of a
 * `(scope, key)` is kept for good and handed back to every later request.
 */
import type { RequestRecord } from '../../core/ports/requests.ts';
import type { MemoryState } from './state.ts';

/** Stores `record` unless `(scope, key)` is known; returns the stored record and whether it is new. */
export function rememberRequest(
  state: MemoryState,
  record: Omit<RequestRecord, 'createdAt'>,
): { created: boolean; record: RequestRecord } {
  const id = recordId(record.scope, record.key);
  const stored = state.requestRecords.get(id);
  if (stored) return { created: false, record: stored };
  const created: RequestRecord = {
    scope: record.scope,
    key: record.key,
    requestHash: record.requestHash,
    value: structuredClone(record.value),
    createdAt: state.clock.now(),
  };
  state.requestRecords.set(id, created);
  return { created: true, record: created };
}

/** The stored record of `(scope, key)`, or null. */
export function getRequest(state: MemoryState, scope: string, key: string): RequestRecord | null {
  const stored = state.requestRecords.get(recordId(scope, key));
  return stored ? structuredClone(stored) : null;
}

/** NUL cannot clash with names on either side. */
function recordId(scope: string, key: string): string {
  return `${scope}\0${key}`;
}
