/**
 * The `publications` sub-port of the SQLite store: the pointer `(subject, profile) -> artifact`
 * that consumers read. They are set only inside `commit`, by a completion whose lease check
 * passed, each by compare-and-set on (subject version, fence) in one statement (`PUBLISH`,
 * {@link applyPublications}); reading one is a plain lookup.
 */
import type { Publication, PublicationRequest, PublicationsPort } from '../../core/ports/publications.ts';
import type { LockFence } from '../../core/ports/jobs.ts';
import type { SqliteContext } from './context.ts';
import { lockFenceIsCurrent } from './locks.ts';
import { publicationFromRow } from './rows.ts';

/** The publication of `(subjectId, profile)`, or null. */
function getPublication(ctx: SqliteContext, subjectId: string, profile: string): Publication | null {
  const row = ctx.sql().selectPublication.get(subjectId, profile);
  return row ? publicationFromRow(row) : null;
}

/**
 * Applies a committed completion's publications in order, fenced by the job's lease fence,
 * inside the caller's transaction; returns how many compare-and-set refused (a refusal changes
 * nothing and does not refuse the completion). Under a `lock`, all are refused unless its fence
 * is still current; accepted ones carry the higher of the two fences.
 */
export function applyPublications(ctx: SqliteContext, requests: readonly PublicationRequest[], leaseFence: number, now: number, lock?: LockFence): number {
  if (lock !== undefined && !lockFenceIsCurrent(ctx, lock)) return requests.length;
  const fence = lock === undefined ? leaseFence : Math.max(leaseFence, lock.fence);
  const publish = ctx.sql().publish;
  let refused = 0;
  for (const request of requests) {
    const { changes } = publish.run({
      subject_id: request.subjectId,
      profile: request.profile,
      artifact_ref: request.artifactRef,
      subject_version: request.subjectVersion,
      fence,
      now,
    });
    if (changes === 0) refused += 1;
  }
  return refused;
}

/** Every publication of `subjectId`, by profile name. */
function listPublications(ctx: SqliteContext, subjectId: string): Publication[] {
  return ctx.sql().selectPublicationsOfSubject.all(subjectId).map(publicationFromRow);
}

/**
 * Removes the publications of `subjectId` (every profile, or only those in `profiles`: an empty
 * list removes none), inside the caller's BEGIN IMMEDIATE transaction; returns how many.
 */
function deletePublications(ctx: SqliteContext, subjectId: string, profiles?: readonly string[]): number {
  const sql = ctx.sql();
  if (profiles === undefined) return sql.deletePublicationsOfSubject.run(subjectId).changes;
  return sql.deletePublicationProfiles.run(subjectId, JSON.stringify(profiles)).changes;
}

/** Reads and removes publications over `ctx`. */
export function createPublicationsPort(ctx: SqliteContext): PublicationsPort {
  return {
    // One statement (see SqliteContext.outside): QR requests poll this.
    get: ctx.outside((subjectId, profile) => getPublication(ctx, subjectId, profile)),
    list: ctx.read((subjectId) => listPublications(ctx, subjectId)),
    delete: ctx.write((subjectId, profiles) => deletePublications(ctx, subjectId, profiles)),
  };
}
