/** Cache endpoints: this process's single-flight counters per cache, and the store's cache entries. */
import type { FastifyPluginAsync } from 'fastify';
import type { CacheCounters } from '../../core/cache.ts';
import { TokenScope } from '../../core/ports/tokens.ts';
import type { Kiln } from '../../engine/kiln-types.ts';
import { access } from '../auth.ts';
import { cacheEntryView } from '../operator-views.ts';
import { CacheEntriesQuery } from '../schemas/operator.ts';

/** Reads this process's cache counters (src/observe/cache-counters.ts provides it). */
export type CacheStatsSource = () => Promise<CacheCounters[]>;

/** Options of {@link cacheRoutes}. */
export interface CacheRoutesOptions {
  kiln: Kiln;
  /** Omitted: `GET /v1/cache/stats` answers `[]`. */
  cacheStats?: CacheStatsSource;
}

/**
 * Registers `GET /v1/cache/stats` (per cache: hit, miss, stale, negative, wait, builds, counted by
 * this process since it started) and `GET /v1/cache/entries?status&cache&limit` (builder tokens
 * are never shown; admin only, see above). The stats are this process's counters, no keys.
 */
export const cacheRoutes: FastifyPluginAsync<CacheRoutesOptions> = async (app, { kiln, cacheStats }) => {
  app.get('/v1/cache/stats', { config: access(TokenScope.read) }, async () => (cacheStats ? cacheStats() : []));

  // Entries are shared by every tenant and their keys may name another tenant's content: admin only.
  app.get<{ Querystring: CacheEntriesQuery }>('/v1/cache/entries', { schema: { querystring: CacheEntriesQuery }, config: access(TokenScope.admin) }, async (request) => {
    return (await kiln.listCacheEntries(request.query)).map(cacheEntryView);
  });
};
