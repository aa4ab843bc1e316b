/**
 * Publications of the memory backend: `(subjectId, profile)` -> artifact, set by compare-and-set
 * inside a commit so that an older subject version or an older lease never overwrites a newer one.
 */
import type { Publication, PublicationRequest } from '../../core/ports.ts';
import type { MemoryStore } from './store.ts';

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
  store: MemoryStore,
  requests: readonly PublicationRequest[],
  fence: number,
  now: number,
): number {
  let refused = 0;
  for (const request of requests) {
    const id = publicationId(request.subjectId, request.profile);
    if (!supersedes(request, fence, store.publications.get(id))) {
      refused += 1;
      continue;
    }
    store.publications.set(id, {
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
export function getPublication(store: MemoryStore, subjectId: string, profile: string): Publication | null {
  return store.publications.get(publicationId(subjectId, profile)) ?? null;
}
