/**
 * What every check of an audit works with: the ports, the options, where its findings go, and the
 * one loop that reads a store scan page by page (so no check holds more than a page).
 */
import type { Clock } from '../../core/clock.ts';
import type { ArtifactStore } from '../../core/ports/artifact-store.ts';
import type { AuditPage, AuditPageRequest } from '../../core/ports/audit.ts';
import type { Store } from '../../core/ports/store.ts';
import type { Violation } from './verify-types.ts';

/** The ports an audit reads. */
export interface VerifyDeps {
  store: Store;
  artifacts: ArtifactStore;
  /** Ages of temp files (their times are file times, not the store's). */
  clock: Clock;
}

/** One check's view of the audit. */
export interface CheckContext extends VerifyDeps {
  readonly leaseGraceMs: number;
  readonly tempGraceMs: number;
  readonly pageSize: number;
  /** Aborted when the audit must stop early. */
  readonly signal: AbortSignal | undefined;
  /** Records a violation found by this check. */
  report(violation: Omit<Violation, 'check'>): void;
  /** Counts records read by this check (and reports progress). */
  scanned(count: number): void;
}

/**
 * Reads a store scan to its end, handing each page's items to `handle` before the next page is
 * read. Returns false when the audit was stopped first.
 */
export async function scanPages<T>(
  ctx: CheckContext,
  read: (page: AuditPageRequest) => Promise<AuditPage<T>>,
  handle: (items: T[]) => Promise<void> | void,
): Promise<boolean> {
  let after: string | null = null;
  do {
    if (ctx.signal?.aborted) return false;
    const page: AuditPage<T> = await read({ after, limit: ctx.pageSize });
    await handle(page.items);
    ctx.scanned(page.scanned);
    after = page.next;
  } while (after !== null);
  return true;
}

/** Runs `work` on each item with at most `limit` at a time (artifact hashing reads files). */
export async function forEachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** A duration for a message: `850 ms`, `42 s`, `3 h 05 m`. */
export function describeDuration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${Math.round(ms / 1_000)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 120) return `${minutes} m`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} m`;
}
