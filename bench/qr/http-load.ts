/**
 * The HTTP load of the QR bench, driven by autocannon in this process: a fixed number of
 * keep-alive connections, each sending its next request as soon as the previous one answered.
 *   - uncached renders: `POST /v1/qr` with a distinct 60-character URL in every body (autocannon
 *     `requests[].setupRequest`), so every request renders; only 200 responses carrying a PNG count.
 *   - plain GETs of one URL (the cached image, the hello-world baseline): 2xx responses count.
 */
import autocannon, { type Result } from 'autocannon';
import { benchUrl } from './raw-render.ts';

/** Settings of one autocannon phase. */
export interface LoadSettings {
  connections: number;
  durationS: number;
}

/** Latency of all responses of a phase, ms (autocannon's histogram). */
export interface LoadLatency {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** What one phase measured. */
export interface LoadResult extends LoadSettings {
  /** Responses that counted: 200 + PNG (uncached) or any 2xx (GET). */
  countedResponses: number;
  /** Counted responses per second of measured time. */
  perSecond: number;
  /** Responses by status code, counted or not. */
  statusCounts: Record<string, number>;
  /** Uncached phase: 200 responses that did not carry a PNG. */
  badBodies: number;
  /** Connection errors and timeouts (autocannon's counts; timeouts are included in errors). */
  errors: number;
  timeouts: number;
  /** Measured time, s (autocannon's `duration`). */
  elapsedS: number;
  latency: LoadLatency;
}

const JSON_HEADERS = { 'content-type': 'application/json' };
/** The bytes of a PNG after its first (0x89, not valid UTF-8) byte, as autocannon's string body shows them. */
const PNG_SIGNATURE_TAIL = 'PNG\r\n';

function statusCounts(result: Result): Record<string, number> {
  return Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([status, s]) => [status, s.count ?? 0]));
}

function latencyOf(result: Result): LoadLatency {
  return { p50Ms: result.latency.p50, p99Ms: result.latency.p99, maxMs: result.latency.max };
}

/**
 * POSTs distinct renders to `${baseUrl}/v1/qr` (ecc M, size 512, PNG, the default `wait`) for
 * `durationS`. Contents are `benchUrl(firstIndex)`, `benchUrl(firstIndex + 1)`, ...: callers give
 * each phase its own range so no content is requested twice.
 */
export async function loadUncachedRenders(baseUrl: string, settings: LoadSettings, firstIndex: number): Promise<LoadResult> {
  let next = firstIndex;
  let pngs = 0;
  let badBodies = 0;
  const result = await autocannon({
    url: baseUrl,
    connections: settings.connections,
    duration: settings.durationS,
    requests: [
      {
        method: 'POST',
        path: '/v1/qr',
        headers: JSON_HEADERS,
        setupRequest: (request) => ({ ...request, body: JSON.stringify({ content: benchUrl(next++), format: 'png', ecc: 'M', size: 512 }) }),
        onResponse: (status, body, _context, headers) => {
          if (status !== 200) return;
          if (headers?.['content-type'] === 'image/png' && body.startsWith(PNG_SIGNATURE_TAIL, 1)) pngs++;
          else badBodies++;
        },
      },
    ],
  });
  return { ...settings, ...summarizeResult(result, pngs), badBodies };
}

/** GETs `url` for `durationS`; every 2xx counts. */
export async function loadGet(url: string, settings: LoadSettings): Promise<LoadResult> {
  const result = await autocannon({ url, connections: settings.connections, duration: settings.durationS });
  return { ...settings, ...summarizeResult(result, result['2xx']), badBodies: 0 };
}

function summarizeResult(result: Result, counted: number): Omit<LoadResult, keyof LoadSettings | 'badBodies'> {
  return {
    countedResponses: counted,
    perSecond: counted / result.duration,
    statusCounts: statusCounts(result),
    errors: result.errors,
    timeouts: result.timeouts,
    elapsedS: result.duration,
    latency: latencyOf(result),
  };
}
