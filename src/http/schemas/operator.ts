/**
 * Request schemas of the operator read endpoints the dashboard (and anyone) uses: dead letters,
 * queue activity, cache entries, publications and artifacts.
 */
import { Type, type Static } from '@sinclair/typebox';
import { CacheEntryStatus } from '../../core/ports/cache.ts';
import { LimitQuery, StringEnum } from './common.ts';

/** `GET /v1/dead-letters` query: `groupBy=code` for the groups, else the dead letters newest first. */
export const DeadLettersQuery = Type.Object(
  {
    groupBy: Type.Optional(Type.Literal('code', { description: 'Answer with one group per error code instead of the jobs.' })),
    code: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only jobs whose last error has this code.' })),
    queue: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
    before: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Keyset cursor: the last job id of the previous page.' })),
    ...LimitQuery.properties,
  },
  { additionalProperties: false },
);
export type DeadLettersQuery = Static<typeof DeadLettersQuery>;

/**
 * `GET /v1/queues/activity` query: `buckets` buckets of `bucketMinutes`, the last one holding now;
 * the window (their product) is at most a day, the activity the store keeps.
 */
export const QueueActivityQuery = Type.Object(
  {
    bucketMinutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 60, default: 1 })),
    buckets: Type.Optional(Type.Integer({ minimum: 1, maximum: 120, default: 15 })),
  },
  { additionalProperties: false },
);
export type QueueActivityQuery = Static<typeof QueueActivityQuery>;

/** `GET /v1/cache/entries` query. */
export const CacheEntriesQuery = Type.Object(
  {
    status: Type.Optional(StringEnum(CacheEntryStatus)),
    cache: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    ...LimitQuery.properties,
  },
  { additionalProperties: false },
);
export type CacheEntriesQuery = Static<typeof CacheEntriesQuery>;

/** `GET /v1/publications` query. */
export const PublicationsQuery = Type.Object(
  { subjectId: Type.String({ minLength: 1, maxLength: 500, description: 'The subject whose publications to list.' }) },
  { additionalProperties: false },
);
export type PublicationsQuery = Static<typeof PublicationsQuery>;

/** `:ref` of `GET /v1/artifacts/:ref`. */
export const ArtifactParams = Type.Object({ ref: Type.String({ pattern: '^sha256:[0-9a-f]{64}$' }) });
export type ArtifactParams = Static<typeof ArtifactParams>;

/**
 * `GET /v1/artifacts/:ref` query: where a non-admin token found the ref (artifacts are shared by
 * content, so a tenant reads one through something of its own): a run whose input or stage
 * outputs hold it, or a subject whose publication points to it.
 */
export const ArtifactQuery = Type.Object(
  {
    run: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'A run whose input or stage outputs hold the ref.' })),
    subjectId: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'A subject with a publication of the ref.' })),
  },
  { additionalProperties: false },
);
export type ArtifactQuery = Static<typeof ArtifactQuery>;
