/**
 * The `requests` sub-port: remembered client requests (`Idempotency-Key`), so the same key answers
 * with the same run in every process.
 */
import type { JsonValue } from '../model.ts';

/**
 * A remembered client request (`Idempotency-Key`): the first request with `(scope, key)` stores
 * `requestHash` and `value`; later ones get the stored record back.
 */
export interface RequestRecord {
  scope: string;
  key: string;
  /** Hash of what identifies the request (e.g. sha256 of the canonical body). */
  requestHash: string;
  /** What the first request produced (e.g. `{ runId, contentHash }`). */
  value: JsonValue;
  createdAt: number;
}

/** Remembers client requests; each method is one atomic unit. */
export interface RequestsPort {
  /**
   * Stores `record` (with `createdAt` = now) unless `(scope, key)` exists; returns the stored
   * record either way and whether this call created it. The caller compares `requestHash`.
   */
  remember(record: Omit<RequestRecord, 'createdAt'>): Promise<{ created: boolean; record: RequestRecord }>;

  /** The remembered request `(scope, key)`, or null; changes nothing. */
  get(scope: string, key: string): Promise<RequestRecord | null>;
}
