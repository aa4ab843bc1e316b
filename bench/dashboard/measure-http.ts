/**
 * Times GET requests against a listening kiln HTTP app, one at a time over keep-alive (what a
 * dashboard's poll does), and summarises them as p50 / p99 / max milliseconds.
 */

/** Timings of one scenario. */
export interface ScenarioTiming {
  name: string;
  path: string;
  /** Rows (or groups, or queues) in the last answer. */
  rows: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** The `q` quantile of sorted values (nearest rank). */
function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}

/** Sends `warmup` untimed then `requests` timed GETs of `base + path`; every answer must be 200. */
export async function timeRequests(base: string, name: string, path: string, requests: number): Promise<ScenarioTiming> {
  const get = async (): Promise<number> => {
    const res = await fetch(`${base}${path}`);
    const body = await res.text();
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${body.slice(0, 200)}`);
    const json = JSON.parse(body) as unknown;
    return Array.isArray(json) ? json.length : Array.isArray((json as { queues?: unknown[] }).queues) ? ((json as { queues: unknown[] }).queues.length) : 1;
  };
  for (let i = 0; i < Math.max(3, Math.ceil(requests / 10)); i++) await get();
  const times: number[] = [];
  let rows = 0;
  for (let i = 0; i < requests; i++) {
    const start = performance.now();
    rows = await get();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { name, path, rows, p50Ms: quantile(times, 0.5), p99Ms: quantile(times, 0.99), maxMs: times.at(-1) ?? Number.NaN };
}
