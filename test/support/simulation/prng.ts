/**
 * The simulation's only source of randomness: mulberry32, a 32-bit seeded generator. Same seed,
 * same numbers, on every machine and every Node version (integer arithmetic only), so a schedule
 * is a function of its seed.
 */
import type { IdGenerator } from '../../../src/core/ids.ts';

/** A seeded pseudo-random source with the draws the simulation needs. */
export interface Prng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
  /** Uniform integer in [min, max]. */
  between(min: number, max: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T;
  /** An index drawn by weight (weights >= 0, at least one > 0). */
  weighted(weights: readonly number[]): number;
}

/** mulberry32 seeded with `seed` (any integer; taken modulo 2^32). */
export function createPrng(seed: number): Prng {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number): number => Math.floor(next() * n);
  return {
    next,
    int,
    between: (min, max) => min + int(max - min + 1),
    chance: (p) => next() < p,
    pick<T>(items: readonly T[]): T {
      if (items.length === 0) throw new RangeError('pick from an empty list');
      return items[int(items.length)] as T;
    },
    weighted(weights) {
      const total = weights.reduce((sum, w) => sum + w, 0);
      let r = next() * total;
      for (let i = 0; i < weights.length; i++) {
        r -= weights[i] ?? 0;
        if (r < 0) return i;
      }
      return weights.length - 1;
    },
  };
}

/**
 * Ids and lease tokens from counters, in the shape `createIdGenerator` makes (time prefix, so ids
 * still sort by creation time): the store's ids, hence its claim order, do not depend on Web
 * Crypto, and a schedule replays exactly.
 */
export function createCountingIds(clock: { now(): number }): IdGenerator {
  let serial = 0;
  let tokens = 0;
  return {
    next: (prefix) => `${prefix}_${clock.now().toString(16).padStart(12, '0')}${(serial++).toString(16).padStart(20, '0')}`,
    token: () => `tok${(tokens++).toString(16).padStart(8, '0')}`,
  };
}
