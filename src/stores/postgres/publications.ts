/**
 * The `publications` sub-port of the PostgreSQL store: reading and removing the
 * `(subject, profile) -> artifact` pointers. They are set only inside a commit, by
 * compare-and-set (see jobs/commit.ts). Each method is one statement.
 */
import type { Publication, PublicationsPort } from '../../core/ports/publications.ts';
import type { PublicationRow } from '../shared/row-mapping.ts';
import type { PgContext } from './context.ts';
import { queryRows } from './database.ts';
import { publicationFromRow } from './rows.ts';

/** The publication of `(subjectId, profile)`, or null. */
async function getPublication(ctx: PgContext, subjectId: string, profile: string): Promise<Publication | null> {
  const [row] = await queryRows<PublicationRow>(ctx.pool, ctx.sql.publications.getPublication, [subjectId, profile]);
  return row ? publicationFromRow(row) : null;
}

/** Every publication of `subjectId`, by profile name. */
async function listPublications(ctx: PgContext, subjectId: string): Promise<Publication[]> {
  return (await queryRows<PublicationRow>(ctx.pool, ctx.sql.publications.listPublications, [subjectId])).map(publicationFromRow);
}

/**
 * Removes the publications of `subjectId` (every profile, or only those in `profiles`: an empty
 * list removes none); returns how many.
 */
async function deletePublications(ctx: PgContext, subjectId: string, profiles?: readonly string[]): Promise<number> {
  const [row] = await queryRows<{ deleted: number }>(ctx.pool, ctx.sql.publications.deletePublications, [subjectId, profiles ?? null]);
  return row?.deleted ?? 0;
}

/** Publications over the context's pool. */
export function createPublicationsPort(ctx: PgContext): PublicationsPort {
  return ctx.port<PublicationsPort>({
    get: (subjectId, profile) => getPublication(ctx, subjectId, profile),
    list: (subjectId) => listPublications(ctx, subjectId),
    delete: (subjectId, profiles) => deletePublications(ctx, subjectId, profiles),
  });
}
