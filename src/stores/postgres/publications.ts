/**
 * Removing publications (`deletePublications`): one statement, so one transaction. Publications
 * are set only inside `commit` (see `commits.ts`) and read in `reads.ts`.
 */
import type { PgContext } from './context.ts';
import { queryRows } from './database.ts';

/**
 * Removes the publications of `subjectId` (every profile, or only those in `profiles`: an empty
 * list removes none); returns how many.
 */
export async function deletePublications(ctx: PgContext, subjectId: string, profiles?: readonly string[]): Promise<number> {
  const [row] = await queryRows<{ deleted: number }>(ctx.pool, ctx.sql.deletePublications, [subjectId, profiles ?? null]);
  return row?.deleted ?? 0;
}
