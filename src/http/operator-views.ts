/**
 * JSON views of what operators read beyond runs and jobs (failed attempts, queue activity, cache
 * entries, publications), in the API's conventions (see views.ts): ISO-8601 times, never a lease
 * or builder token.
 */
import type { FailedAttempt, JsonValue } from '../core/model.ts';
import type { CacheEntry } from '../core/ports/cache.ts';
import type { Publication } from '../core/ports/publications.ts';
import type { QueueActivity, QueueActivityReport } from '../core/ports/stats.ts';
import { JOB_AGE_BOUNDS_MS } from '../core/ports/stats.ts';
import { isoTime as iso } from './views.ts';

/** One failed attempt; `startedAt` is when its handler started (`failedAt - durationMs`). */
export type AttemptView = Omit<FailedAttempt, 'failedAt'> & { startedAt: string; failedAt: string };

/** Converts a failed attempt. */
export function attemptView(attempt: FailedAttempt): AttemptView {
  return {
    ...attempt,
    startedAt: new Date(attempt.failedAt - Math.max(0, attempt.durationMs)).toISOString(),
    failedAt: new Date(attempt.failedAt).toISOString(),
  };
}

/** Queue activity: bucket i spans `[from + i*bucketMs, from + (i+1)*bucketMs)`; ages per `ageBoundsMs` bucket. */
export interface QueueActivityView {
  from: string;
  now: string;
  bucketMs: number;
  /** Upper bounds (exclusive) of the age buckets of `readyAges`; the last bucket is open. */
  ageBoundsMs: readonly number[];
  queues: QueueActivity[];
}

/** Converts a queue activity report, adding an all-zero entry for each of `knownQueues` without activity. */
export function queueActivityView(report: QueueActivityReport, knownQueues: readonly string[]): QueueActivityView {
  const listed = new Set(report.queues.map((q) => q.queue));
  // The last bucket holds now.
  const buckets = Math.floor((report.now - report.from) / report.bucketMs) + 1;
  const idle = knownQueues
    .filter((queue) => !listed.has(queue))
    .map((queue) => ({ queue, completed: zeros(buckets), failed: zeros(buckets), readyAges: zeros(JOB_AGE_BOUNDS_MS.length + 1) }));
  return {
    from: new Date(report.from).toISOString(),
    now: new Date(report.now).toISOString(),
    bucketMs: report.bucketMs,
    ageBoundsMs: JOB_AGE_BOUNDS_MS,
    queues: [...report.queues, ...idle].sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0)),
  };
}

function zeros(n: number): number[] {
  return Array<number>(n).fill(0);
}

/** A cache entry without its builder token (a write capability). */
export interface CacheEntryView {
  cache: string;
  key: string;
  status: CacheEntry['status'];
  value: JsonValue | null;
  error: JsonValue | null;
  builderOwner: string | null;
  builderFence: number | null;
  builderUntil: string | null;
  expiresAt: string | null;
  staleUntil: string | null;
  updatedAt: string;
}

/** Converts a cache entry. */
export function cacheEntryView(entry: CacheEntry): CacheEntryView {
  return {
    cache: entry.cache,
    key: entry.key,
    status: entry.status,
    value: entry.value,
    error: entry.error,
    builderOwner: entry.builderOwner,
    builderFence: entry.builderFence,
    builderUntil: iso(entry.builderUntil),
    expiresAt: iso(entry.expiresAt),
    staleUntil: iso(entry.staleUntil),
    updatedAt: new Date(entry.updatedAt).toISOString(),
  };
}

/** A publication with the URL of its artifact. */
export type PublicationView = Omit<Publication, 'updatedAt'> & { updatedAt: string; artifactUrl: string };

/**
 * Converts a publication; its artifact URL names the subject, through which a tenant's token may
 * read the artifact (see routes/artifacts.ts).
 */
export function publicationView(publication: Publication): PublicationView {
  return {
    ...publication,
    updatedAt: new Date(publication.updatedAt).toISOString(),
    artifactUrl: `${artifactUrl(publication.artifactRef)}?subjectId=${encodeURIComponent(publication.subjectId)}`,
  };
}

/** Where `GET /v1/artifacts/:ref` serves an artifact. */
export function artifactUrl(ref: string): string {
  return `/v1/artifacts/${encodeURIComponent(ref)}`;
}
