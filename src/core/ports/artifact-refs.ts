/**
 * The `artifactRefs` sub-port: what garbage collection must keep.
 */

/** The artifacts something in the store still refers to. */
export interface ArtifactRefsPort {
  /**
   * Every artifact ref something may still read, for garbage collection: the artifact of every
   * publication; every `sha256:<64 hex>` string anywhere in the value of a cache entry (any
   * status); and every such string in the input and the stage outputs of runs that may still run
   * or be replayed (`queued`, `running`, `parked`, `dead_lettered`). Sorted, no duplicates.
   */
  list(): Promise<string[]>;
}
