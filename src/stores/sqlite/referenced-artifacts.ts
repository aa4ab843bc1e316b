/**
 * The artifact refs something in the store may still read (`listReferencedArtifacts`), for
 * garbage collection: read in one deferred transaction (one snapshot, no write lock) and scanned
 * in TypeScript with the pattern every store shares (`stores/shared/artifact-refs.ts`).
 * Rows are iterated, not collected, so a large store is scanned without holding all its JSON.
 */
import { collectArtifactRefs, sortedArtifactRefs } from '../shared/artifact-refs.ts';
import type { SqliteContext } from './context.ts';

/**
 * Every publication's artifact; every ref in the value of a cache entry (any status); every ref
 * in the input and the stage outputs of runs that may still run or be replayed. Sorted, unique.
 */
export function listReferencedArtifacts(ctx: SqliteContext): string[] {
  const sql = ctx.sql();
  const refs = new Set<string>(sql.selectPublishedArtifactRefs.all());
  for (const json of sql.selectCacheValuesWithRefs.iterate()) collectArtifactRefs(json, refs);
  for (const json of sql.selectReplayableRunJson.iterate()) collectArtifactRefs(json, refs);
  return sortedArtifactRefs(refs);
}
