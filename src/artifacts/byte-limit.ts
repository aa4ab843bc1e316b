/**
 * The byte limit of the filesystem artifact store (`artifacts.maxBytes`): a full disk made on
 * purpose, for machines where a small filesystem cannot be mounted, and for operators who want to
 * cap the store. Past the limit a write fails the way a full disk fails (an `ENOSPC` error, which
 * the store's edge turns into a retryable `ARTIFACTS_UNAVAILABLE`).
 *
 * What counts: the bytes of stored objects (sidecars and temp files do not). The count is a running
 * total kept by this process: one walk of `objects/` at its first write, then every object it
 * places adds its size and every object it removes subtracts it. A write reserves its bytes before
 * it touches the disk (a stream chunk by chunk), so concurrent writes in one process cannot
 * overshoot together.
 *
 * Several processes sharing the directory each keep their own total, so the limit is soft there:
 * a process does not see what the others wrote since its last walk. A write that would pass the
 * limit walks the directory again first (at most once per {@link RESCAN_MIN_INTERVAL_MS}), so space
 * freed by another process (garbage collection) is seen at the next refused write. The same walk
 * corrects what this process counted too much (two writers of the same new content both count
 * it; a damaged object rewritten counts twice), so a count that errs on the full side never
 * refuses writes for good.
 */

/** A refused write walks the objects again at most this often. */
export const RESCAN_MIN_INTERVAL_MS = 1_000;

/** The running total of one store. */
export interface ByteLimit {
  readonly maxBytes: number;
  /** Takes `bytes` from the budget for a write in progress, or throws an `ENOSPC` error when they do not fit. */
  reserve(bytes: number): Promise<void>;
  /** Ends a reservation: `stored` when the write placed a new object, else (failed, duplicate) the bytes are free again. */
  settle(bytes: number, stored: boolean): void;
  /** An object of `bytes` was removed. */
  removed(bytes: number): void;
}

/**
 * A byte limit of `maxBytes` over the objects whose sizes `walk` sums; `now` is a clock in ms.
 * Objects placed or removed while a walk runs may be counted by it or not until the next walk.
 */
export function createByteLimit(maxBytes: number, walk: () => Promise<number>, now: () => number = () => performance.now()): ByteLimit {
  /** Bytes of stored objects: the last walk's sum, plus what this process placed and removed since. */
  let stored = 0;
  /** Bytes of writes in progress in this process. */
  let reserved = 0;
  let walked: Promise<void> | undefined;
  let lastWalkAt = Number.NEGATIVE_INFINITY;
  const rescan = (): Promise<void> => {
    lastWalkAt = now();
    walked = walk().then((sum) => {
      stored = sum;
    });
    // A failed walk is tried again by the next write.
    walked.catch(() => (walked = undefined));
    return walked;
  };
  return {
    maxBytes,
    async reserve(bytes) {
      await (walked ?? rescan());
      if (stored + reserved + bytes > maxBytes && now() - lastWalkAt >= RESCAN_MIN_INTERVAL_MS) await rescan();
      if (stored + reserved + bytes > maxBytes) {
        const err = new Error(`artifacts.maxBytes reached: ${bytes} more bytes do not fit (${stored + reserved} of ${maxBytes} bytes in use)`) as NodeJS.ErrnoException;
        err.code = 'ENOSPC';
        throw err;
      }
      reserved += bytes;
    },
    settle(bytes, placed) {
      reserved -= bytes;
      if (placed) stored += bytes;
    },
    removed(bytes) {
      stored = Math.max(0, stored - bytes);
    },
  };
}
