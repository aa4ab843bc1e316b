/**
 * Publications of the memory store: `(subjectId, profile)` -> artifact, set by compare-and-set
 * inside a commit so that an older subject version or an older lease never overwrites a newer one.
 */
import type { Publication, PublicationRequest } from '../../core/ports/publications.ts';
import type { MemoryState } from './state.ts';

/** Map key of `(subjectId, profile)`; NUL cannot clash with names on either side. */
function publicationId(subjectId: string, profile: string): string {
  return `${subjectId}\0${profile}`;
}

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
 * compare-and-set refused. Called only once the commit's lease check has passed.
 */
export function applyPublications(
  state: MemoryState,
  requests: readonly PublicationRequest[],
  fence: number,
  now: number,
): number {
  let refused = 0;
  for (const request of requests) {
    const id = publicationId(request.subjectId, request.profile);
    if (!supersedes(request, fence, state.publications.get(id))) {
      refused += 1;
      continue;
    }
    state.publications.set(id, {
      subjectId: request.subjectId,
      profile: request.profile,
      artifactRef: request.artifactRef,
      subjectVersion: request.subjectVersion,
      fence,
      updatedAt: now,
    });
  }
  return refused;
}

/** The publication of `(subjectId, profile)`, or null. */
export function getPublication(state: MemoryState, subjectId: string, profile: string): Publication | null {
  return state.publications.get(publicationId(subjectId, profile)) ?? null;
}

/** Every publication of `subjectId`, by profile name. */
export function listPublications(state: MemoryState, subjectId: string): Publication[] {
  return [...state.publications.values()]
    .filter((p) => p.subjectId === subjectId)
    .sort((a, b) => (a.profile < b.profile ? -1 : a.profile > b.profile ? 1 : 0));
}

/**
 * Removes the publications of `subjectId` (every profile, or only those in `profiles`: an empty
 * list removes none); returns how many were removed.
 */
export function deletePublications(state: MemoryState, subjectId: string, profiles?: readonly string[]): number {
  const only = profiles === undefined ? undefined : new Set(profiles);
  let removed = 0;
  for (const [id, stored] of state.publications) {
    if (stored.subjectId !== subjectId || (only !== undefined && !only.has(stored.profile))) continue;
    state.publications.delete(id);
    removed += 1;
  }
  return removed;
}
