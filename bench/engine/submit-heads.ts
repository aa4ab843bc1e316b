/**
 * How a benchmark submits the heads of its measured runs/chains, shared by every system of
 * both engine suites so `--submit single|bulk` means the same thing for kiln, BullMQ,
 * graphile-worker and pg-boss.
 */

/** Submission mode of `--submit`. */
export const SubmitMode = {
  /** One head at a time, each awaited: the measure includes sequential submit latency. */
  Single: 'single',
  /** Heads in chunks through each system's bulk API: the measure is processing-bound. */
  Bulk: 'bulk',
} as const;
export type SubmitMode = (typeof SubmitMode)[keyof typeof SubmitMode];

/** Heads per bulk call, for every system (one store transaction / script per chunk). */
export const BULK_CHUNK_SIZE = 500;

/** Reads a `--submit` value; `single` when absent. */
export function parseSubmitMode(raw: string | undefined): SubmitMode {
  if (raw === undefined || raw === SubmitMode.Single) return SubmitMode.Single;
  if (raw === SubmitMode.Bulk) return SubmitMode.Bulk;
  throw new Error(`--submit must be "single" or "bulk", got "${raw}"`);
}

/** One system's two ways to submit heads; `n` is the head's sequence number (its payload). */
export interface HeadSubmitter {
  /** Submits one head and resolves when the system acknowledged it. */
  one(n: number): Promise<unknown>;
  /** Submits the given heads with one bulk call. */
  many(ns: readonly number[]): Promise<unknown>;
}

/**
 * Submits heads `offset .. offset+count-1` in `mode`: one awaited call each, or awaited bulk
 * calls of {@link BULK_CHUNK_SIZE}. Chunks go one after another so a system never has more
 * than one bulk insert in flight (as a producer would), and the first chunk's runs can start
 * while the next is being written.
 */
export async function submitHeads(mode: SubmitMode, count: number, offset: number, submitter: HeadSubmitter): Promise<void> {
  if (mode === SubmitMode.Single) {
    for (let i = 0; i < count; i++) await submitter.one(offset + i);
    return;
  }
  for (let start = 0; start < count; start += BULK_CHUNK_SIZE) {
    const size = Math.min(BULK_CHUNK_SIZE, count - start);
    await submitter.many(Array.from({ length: size }, (_, i) => offset + start + i));
  }
}
