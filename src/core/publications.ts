/**
 * Publications: the `(subject, profile) -> artifact` pointers consumers read, set only by
 * compare-and-set inside a stage's commit (see `CompleteStageRequest.publish` in ports.ts), and
 * remembered client requests (`Idempotency-Key`).
 */
import type { JsonValue } from './model.ts';

/**
 * Points `(subjectId, profile)` at an artifact. Applied only when no publication exists for the
 * pair, or the stored one has a lower `subjectVersion`, or the same version and a lower fence
 * (the fence is the committing job's lease fence, so a later holder of the same version wins
 * and a duplicate of the same holder is a no-op). Never moves to a lower version.
 */
export interface PublicationRequest {
  subjectId: string;
  profile: string;
  /** `sha256:<hex>` of an artifact already stored. */
  artifactRef: string;
  subjectVersion: number;
}

/** A stored publication: what consumers read. */
export interface Publication {
  subjectId: string;
  profile: string;
  artifactRef: string;
  subjectVersion: number;
  /** Fence of the job whose commit set it. */
  fence: number;
  updatedAt: number;
}

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
