/**
 * The `publications` sub-port of the memory store: `(subjectId, profile)` -> artifact, set by
 * compare-and-set inside a commit ({@link applyPublications}) so that an older subject version or
 * an older lease never overwrites a newer one.
 */
import type { LockFence } from '../../core/ports/jobs.ts';
import type { Publication, PublicationRequest, PublicationsPort } from '../../core/ports/publications.ts';
import type { MemoryContext } from './context.ts';
import { lockFenceIsCurrent } from './locks.ts';
import { pairKey, publicationOf } from './rows.ts';
import { deleteWhere, type MemoryState } from './state.ts';

/**
 * The compare-and-set rule: a higher version always wins; the same version wins only from a
 * higher fence (a later holder), so a replay of the same holder changes nothing.
 */
function supersedes(request: PublicationRequest, fence: number, stored: Publication | undefined): boolean {
  if (stored === undefined) return true;
  if (request.subjectVersion !== stored.subjectVersion) return request.subjectVersion > stored.subjectVersion;
  return fence > stored.fence;
}

/**
 * Applies `requests` in order for a commit fenced by `fence`, at `now`; returns how many the
 * compare-and-set refused. Called only once the commit's lease check has passed. Under a `lock`,
 * all are refused unless its fence is still current; accepted ones carry the higher fence.
 */
export function applyPublications(
  state: MemoryState,
  requests: readonly PublicationRequest[],
  leaseFence: number,
  now: number,
  lock?: LockFence,
): number {
  if (requests.length === 0) return 0;
  if (lock !== undefined && !lockFenceIsCurrent(state, lock)) return requests.length;
  const fence = lock === undefined ? leaseFence : Math.max(leaseFence, lock.fence);
  let refused = 0;
  for (const request of requests) {
    const id = pairKey(request.subjectId, request.profile);
    if (!supersedes(request, fence, state.publications.get(id))) {
      refused += 1;
      continue;
    }
    state.publications.set(id, publicationOf(request, fence, now));
  }
  return refused;
}

/** The publication of `(subjectId, profile)`, or null. */
function getPublication(state: MemoryState, subjectId: string, profile: string): Publication | null {
  return state.publications.get(pairKey(subjectId, profile)) ?? null;
}

/** Every publication of `subjectId`, by profile name. */
function listPublications(state: MemoryState, subjectId: string): Publication[] {
  return [...state.publications.values()]
    .filter((p) => p.subjectId === subjectId)
    .sort((a, b) => (a.profile < b.profile ? -1 : a.profile > b.profile ? 1 : 0));
}

/**
 * Removes the publications of `subjectId` (every profile, or only those in `profiles`: an empty
 * list removes none); returns how many were removed.
 */
function deletePublications(state: MemoryState, subjectId: string, profiles?: readonly string[]): number {
  const only = profiles === undefined ? undefined : new Set(profiles);
  return deleteWhere(
    state.publications,
    (stored) => stored.subjectId === subjectId && (only === undefined || only.has(stored.profile)),
  );
}

/** Reads and removes the publications of the state. */
export function createPublicationsPort(ctx: MemoryContext): PublicationsPort {
  const { state } = ctx;
  return {
    get: ctx.atomic((subjectId, profile) => getPublication(state, subjectId, profile)),
    list: ctx.atomic((subjectId) => listPublications(state, subjectId)),
    delete: ctx.atomic((subjectId, profiles) => deletePublications(state, subjectId, profiles)),
  };
}
