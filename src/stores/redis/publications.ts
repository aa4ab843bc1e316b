/**
 * The `publications` sub-port of the Redis store: reading and removing the
 * `(subject, profile) -> artifact` pointers. They are set only inside a commit, by compare-and-set
 * (jobs-commit), in `pub:<subjectId>`: a hash whose field is the profile and whose value is the
 * JSON text `{artifactRef, subjectVersion, fence, updatedAt}` with the numbers as decimal text
 * (see lib-keys.lua). Each method is one script.
 */
import type { Publication, PublicationsPort } from '../../core/ports/publications.ts';
import type { RedisContext } from './context.ts';
import type { FlatHash } from './rows.ts';

/** A publication as jobs-commit stores it (numbers as decimal text). */
interface StoredPublication {
  artifactRef: string;
  subjectVersion: string | number;
  fence: string | number;
  updatedAt: string | number;
}

/** The stored JSON text of `(subjectId, profile)` as a {@link Publication}. */
function publicationFrom(subjectId: string, profile: string, stored: string): Publication {
  const p = JSON.parse(stored) as StoredPublication;
  return {
    subjectId,
    profile,
    artifactRef: p.artifactRef,
    subjectVersion: Number(p.subjectVersion),
    fence: Number(p.fence),
    updatedAt: Number(p.updatedAt),
  };
}

/** Every publication of `subjectId`, by profile name (code-unit order, as every store). */
async function listPublications(ctx: RedisContext, subjectId: string): Promise<Publication[]> {
  const flat = await ctx.call<FlatHash | Record<string, never>>('publications-list', [subjectId]);
  const pairs = Array.isArray(flat) ? (flat as FlatHash) : [];
  const publications: Publication[] = [];
  for (let i = 0; i + 1 < pairs.length; i += 2) publications.push(publicationFrom(subjectId, pairs[i] as string, pairs[i + 1] as string));
  return publications.sort((a, b) => (a.profile < b.profile ? -1 : a.profile > b.profile ? 1 : 0));
}

/** Publications on Redis. */
export function createPublicationsPort(ctx: RedisContext): PublicationsPort {
  return ctx.port<PublicationsPort>({
    get: async (subjectId, profile) => {
      const stored = await ctx.call<string | null>('publications-get', [subjectId, profile]);
      return stored === null ? null : publicationFrom(subjectId, profile, stored);
    },
    list: (subjectId) => listPublications(ctx, subjectId),
    // An empty list removes none (as every store): no script needed.
    delete: async (subjectId, profiles) => {
      if (profiles !== undefined && profiles.length === 0) return 0;
      const only = profiles === undefined ? ['0'] : ['1', ...profiles];
      return Number(await ctx.call<string>('publications-delete', [subjectId, ...only]));
    },
  });
}
