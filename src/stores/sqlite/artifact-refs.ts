/**
 * The `artifactRefs` sub-port of the SQLite store: the artifact refs something in the store may
 * still read, for garbage collection. Read in one deferred transaction (one snapshot, no write
 * lock) and scanned in TypeScript with the pattern every store shares
 * (`stores/shared/artifact-refs.ts`). Rows are iterated, not collected, so a large store is
 * scanned without holding all its JSON.
 */
import type { ArtifactRefsPort } from '../../core/ports/artifact-refs.ts';
import { collectArtifactRefs, sortedArtifactRefs } from '../shared/artifact-refs.ts';
import type { SqliteContext } from './context.ts';

/**
 * Every publication's artifact; every ref in the value of a cache entry (any status); every ref
 * in the input and the stage outputs of runs that may still run or be replayed. Sorted, unique.
 */
function listReferencedArtifacts(ctx: SqliteContext): string[] {
  const sql = ctx.sql();
  const refs = new Set<string>();
  for (const ref of sql.selectPublishedArtifactRefs.iterate()) refs.add(ref);
  for (const json of sql.selectCacheValuesWithRefs.iterate()) collectArtifactRefs(json, refs);
  for (const json of sql.selectReplayableRunJson.iterate()) collectArtifactRefs(json, refs);
  return sortedArtifactRefs(refs);
}

/** The artifact refs garbage collection must keep, over `ctx`. */
export function createArtifactRefsPort(ctx: SqliteContext): ArtifactRefsPort {
  return { list: ctx.read(() => listReferencedArtifacts(ctx)) };
}
