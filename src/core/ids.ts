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

/** Random bytes as hex, from Web Crypto (available in Node 20 without importing node:crypto). */
function randomHex(bytes: number): string {
  const buf = new Uint8Array(bytes);
  globalThis.crypto.getRandomValues(buf);
  let out = '';
  for (const b of buf) out += b.toString(16).padStart(2, '0');
  return out;
}

/** Time-ordered random ids. */
export function createIdGenerator(clock: Clock): IdGenerator {
  return {
    next: (prefix) => `${prefix}_${clock.now().toString(16).padStart(12, '0')}${randomHex(10)}`,
    token: () => randomHex(16),
  };
}
