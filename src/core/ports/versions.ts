/**
 * The `versions` sub-port: race-free counters, e.g. the version of each upload of an asset.
 */

/** Counters handed out once each. */
export interface VersionsPort {
  /**
   * Increments the counter `(scope, key)` in ONE transaction and returns the new value: 1 on first
   * use, then 2, 3, ... with no value handed out twice, however many processes call at once (e.g.
   * the version of each upload of an asset).
   */
  allocate(scope: string, key: string): Promise<number>;
}
