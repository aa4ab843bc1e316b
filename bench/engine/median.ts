/**
 * The median of a benchmark's rounds, shared by the suites that repeat their rounds: the lower
 * middle one for an even count, so the reported round is always one that ran.
 */

/** The item with the median `value` (the lower middle of an even count); undefined when empty. */
export function lowerMedianBy<T>(items: readonly T[], value: (item: T) => number): T | undefined {
  return [...items].sort((a, b) => value(a) - value(b))[Math.floor((items.length - 1) / 2)];
}
