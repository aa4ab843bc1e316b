/**
 * The `publications` sub-port: the `(subject, profile) -> artifact` pointers consumers read. They
 * are set only by compare-and-set inside a stage's commit (`CompleteStageRequest.publish`, see
 * jobs.ts); this port reads and removes them.
 */

/**
 * Points `(subjectId, profile)` at an artifact. Applied only when no publication exists for the
 * pair, or the stored one has a lower `subjectVersion`, or the same version and a lower fence
 * (the fence is the committing job's lease fence, so a later holder of the same version wins
 * and a duplicate of the same holder is a no-op). Never moves to a lower version. A completion
 * made under a lock also needs that lock's fence to be current, and publishes with it (see
 * `CompleteStageRequest.lock`).
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
  /** Fence of the job whose commit set it (of its lock, for a completion made under a lock). */
  fence: number;
  updatedAt: number;
}

/** Reads and removes publications; each method is one atomic unit. */
export interface PublicationsPort {
  /** The publication of `(subjectId, profile)`, or null. */
  get(subjectId: string, profile: string): Promise<Publication | null>;

  /** Every publication of a subject, by profile name. */
  list(subjectId: string): Promise<Publication[]>;

  /**
   * Removes the publications of a subject (every profile, or only `profiles`); returns how many.
   * Their artifacts stay until garbage collection finds them unreferenced.
   */
  delete(subjectId: string, profiles?: readonly string[]): Promise<number>;
}
