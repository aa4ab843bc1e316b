/**
 * Id generation is injected like the clock. Ids sort by creation time (48-bit ms timestamp in
 * hex, then 80 random bits), so listings by id are listings by age.
 */
import type { Clock } from './clock.ts';

/** Creates ids with a type prefix, e.g. `run_0193f2...`. */
export interface IdGenerator {
  next(prefix: string): string;
  /** An unguessable token (lease tokens, worker ids). */
  token(): string;
}

/** Random bytes are drawn from Web Crypto in blocks: one call per block, not per id (hot path). */
const POOL_BYTES = 4096;
let pool = new Uint8Array(0);
let poolOffset = 0;

/**
 * `bytes` random bytes as hex, from Web Crypto (available in Node 20 without importing
 * node:crypto), drawn from the shared pool: ids, lease tokens and trace ids all take theirs here.
 */
export function randomHex(bytes: number): string {
  if (poolOffset + bytes > pool.length) {
    pool = new Uint8Array(POOL_BYTES);
    globalThis.crypto.getRandomValues(pool);
    poolOffset = 0;
  }
  let out = '';
  for (let i = poolOffset; i < poolOffset + bytes; i++) out += HEX[pool[i] ?? 0];
  poolOffset += bytes;
  return out;
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

/** The 80-bit random part is kept as two 40-bit halves (exact in a double; no BigInt per id). */
const HALF = 2 ** 40;
const TWO_32 = 2 ** 32;

/** `value` (0 <= value < 2^40) as 10 hex digits, from the byte table (~6x faster than toString(16) + padStart). */
function hex40(value: number): string {
  const low = value % TWO_32;
  return `${HEX[(value - low) / TWO_32]}${HEX[low >>> 24]}${HEX[(low >>> 16) & 0xff]}${HEX[(low >>> 8) & 0xff]}${HEX[low & 0xff]}`;
}

/** Milliseconds `ms` (0 <= ms < 2^48) as the 12 hex digits that lead an id. */
function timeHex(ms: number): string {
  return ms.toString(16).padStart(12, '0');
}

/**
 * Time-ordered random ids, strictly increasing within one generator: an id made in the same
 * millisecond as the previous one (or after the clock stepped back) takes the previous time and
 * random part plus one, as ULID's monotonic mode does.
 */
export function createIdGenerator(clock: Clock): IdGenerator {
  let lastMs = -1;
  let high = 0;
  let low = 0;
  /** The time and the random part's high half as hex: the same for every id until either changes. */
  let stem = '';
  return {
    next(prefix) {
      const now = clock.now();
      if (now > lastMs) {
        lastMs = now;
        high = Number.parseInt(randomHex(5), 16);
        low = Number.parseInt(randomHex(5), 16);
        stem = timeHex(now) + hex40(high);
      } else if (++low === HALF) {
        low = 0;
        high = (high + 1) % HALF;
        stem = timeHex(lastMs) + hex40(high);
      }
      return `${prefix}_${stem}${hex40(low)}`;
    },
    token: () => randomHex(16),
  };
}

/**
 * The time prefix of the ids {@link createIdGenerator} makes at `ms`: it sorts after every id
 * made before `ms` and before every id made at `ms` or later. Stores use it to turn a
 * creation-time window into an id range they can seek, since ids sort by creation time.
 */
export function idTimeFloor(prefix: string, ms: number): string {
  const clamped = Math.min(Math.max(0, Math.floor(ms)), 2 ** 48 - 1);
  return `${prefix}_${timeHex(clamped)}`;
}
