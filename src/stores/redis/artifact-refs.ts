/**
 * The `artifactRefs` sub-port of the Redis store: every artifact ref something may still read,
 * found by one script (routines/artifact-refs-list.lua, one consistent view) that scans the JSON
 * text of cache values, run inputs and stage outputs with the pattern every store shares.
 */
import type { ArtifactRefsPort } from '../../core/ports/artifact-refs.ts';
import { REPLAYABLE_RUN_STATUSES, sortedArtifactRefs } from '../shared/artifact-refs.ts';
import type { RedisContext } from './context.ts';
import { listOf } from './rows.ts';

/** Artifact references on Redis. */
export function createArtifactRefsPort(ctx: RedisContext): ArtifactRefsPort {
  return ctx.port<ArtifactRefsPort>({
    list: async () => sortedArtifactRefs(listOf(await ctx.call<string[] | Record<string, never>>('artifact-refs-list', REPLAYABLE_RUN_STATUSES))),
  });
}
