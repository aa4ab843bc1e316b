/**
 * The `artifactRefs` sub-port of the memory store: the artifact refs something in the state may
 * still read, for garbage collection. Values are scanned as JSON text, exactly as the SQL stores
 * scan their stored columns (see `stores/shared/artifact-refs.ts`).
 */
import type { ArtifactRefsPort } from '../../core/ports/artifact-refs.ts';
import { collectArtifactRefs, REPLAYABLE_RUN_STATUSES, sortedArtifactRefs } from '../shared/artifact-refs.ts';
import type { MemoryContext } from './context.ts';
import type { MemoryState } from './state.ts';

/**
 * Every publication's artifact; every ref in the value of a cache entry (any status); every ref
 * in the input and the stage outputs of runs that may still run or be replayed. Sorted, unique.
 */
function listReferencedArtifacts(state: MemoryState): string[] {
  const refs = new Set<string>();
  for (const publication of state.publications.values()) refs.add(publication.artifactRef);
  for (const entry of state.cacheEntries.values()) {
    if (entry.value !== null) collectArtifactRefs(JSON.stringify(entry.value), refs);
  }
  for (const run of state.runs.values()) {
    if (!REPLAYABLE_RUN_STATUSES.includes(run.status)) continue;
    collectArtifactRefs(JSON.stringify(run.input), refs);
    for (const record of state.stages.get(run.id) ?? []) {
      if (record.output !== null) collectArtifactRefs(JSON.stringify(record.output), refs);
    }
  }
  return sortedArtifactRefs(refs);
}

/** The artifact refs garbage collection must keep, from the state. */
export function createArtifactRefsPort(ctx: MemoryContext): ArtifactRefsPort {
  const { state } = ctx;
  return { list: ctx.atomic(() => listReferencedArtifacts(state)) };
}
