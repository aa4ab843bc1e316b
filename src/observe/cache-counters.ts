/**
 * The single-flight cache counters of this process, per cache, read back from its metrics
 * registry (`kiln_cache_requests_total`, `kiln_cache_builds_total`): what the dashboard's cache
 * view shows. Counters are per process, like every counter of /metrics.
 */
import type { Registry } from 'prom-client';
import type { CacheCounters } from '../core/cache.ts';
import { CacheRequestResult } from '../core/observer.ts';

const RESULTS = Object.values(CacheRequestResult);

/** Values of a counter in `registry` by label set; empty when the counter is not registered. */
async function counterValues(registry: Registry, name: string): Promise<{ labels: Record<string, string | number>; value: number }[]> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return [];
  return (await metric.get()).values.map((v) => ({ labels: v.labels as Record<string, string | number>, value: v.value }));
}

/** Every cache this process has looked up or built, by name. */
export async function readCacheCounters(registry: Registry): Promise<CacheCounters[]> {
  const byCache = new Map<string, CacheCounters>();
  const of = (cache: string): CacheCounters => {
    let counters = byCache.get(cache);
    if (!counters) byCache.set(cache, (counters = { cache, hit: 0, miss: 0, stale: 0, negative: 0, wait: 0, builds: 0 }));
    return counters;
  };
  for (const { labels, value } of await counterValues(registry, 'kiln_cache_requests_total')) {
    const result = RESULTS.find((r) => r === labels.result);
    if (result !== undefined) of(String(labels.cache))[result] += value;
  }
  for (const { labels, value } of await counterValues(registry, 'kiln_cache_builds_total')) of(String(labels.cache)).builds += value;
  return [...byCache.values()].sort((a, b) => (a.cache < b.cache ? -1 : a.cache > b.cache ? 1 : 0));
}
