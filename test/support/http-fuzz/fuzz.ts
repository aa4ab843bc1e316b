/**
 * The HTTP fuzzer: every route the server registers (read from fastify by an onRoute hook, so a
 * new route is fuzzed without editing this file, and fails until route-specs.ts covers it) gets
 * fast-check requests through `app.inject`, against a real kiln over a SQLite file store and the
 * filesystem artifact store. The property, per request:
 * - the status is below 500, except a 503 that carries `Retry-After`;
 * - every error (status >= 400) answers kiln's envelope with a code of docs/errors.md's catalogue,
 *   and the status the catalogue gives that code;
 * - an answer comes within `hangMs` (a request that hangs is a failure, not a stuck test).
 * Memory is checked around the run by heap used after a forced GC (see `heapAfterGc`).
 */
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { join } from 'node:path';
import fc, { type Parameters } from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { ERROR_CODES } from '../../../src/core/errors.ts';
import { createSqliteStore } from '../../../src/stores/sqlite/index.ts';
import { openHttpHarness, type HttpHarness } from '../../integration/http-harness.ts';
import { requestsFor, type FuzzRequest } from './requests.ts';
import { hintsOf, routeSpecOf, type RegisteredRoute, type SpecOf } from './route-specs.ts';
import { seedStore, type FuzzSeeds } from './seeds.ts';

/** A served kiln, its routes as fastify registered them, and the data seeded into it. */
export interface FuzzTarget {
  harness: HttpHarness;
  routes: RegisteredRoute[];
  seeds: FuzzSeeds;
  /** Where the app listens, once a real-HTTP pass has started it. */
  origin?: string;
  close(): Promise<void>;
}

/** Options of {@link openFuzzTarget}. */
export interface TargetOptions {
  /** Adds routes before the app is ready (the test that shows the fuzzer catches a bug). */
  plant?: (app: FastifyInstance) => void;
  /**
   * Which queues a worker serves while fuzzing: `qr` (the default: QR requests wait for their
   * render) or `all` (runs move on while they are cancelled, replayed and deleted: races).
   */
  worker?: 'qr' | 'all';
}

/** Opens a kiln over a SQLite file in a temp dir, records its routes, seeds it, and runs a worker. */
export async function openFuzzTarget({ plant, worker = 'qr' }: TargetOptions = {}): Promise<FuzzTarget> {
  const harness = await openHttpHarness((dir) => createSqliteStore({ path: join(dir, 'kiln.db') }));
  const routes: RegisteredRoute[] = [];
  // buildApp registers its routes in plugins, which load at ready(): this hook sees every one.
  harness.app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method: String(method), url: route.url, ...(route.schema ? { schema: route.schema } : {}) });
  });
  plant?.(harness.app);
  await harness.app.ready();
  const seeds = await seedStore(harness);
  // QR requests wait (`wait` ms) for their render: a worker on (at least) the QR queues answers them.
  const queues = worker === 'qr' ? { queues: ['qr-code.render', 'qr-code.publish'] } : {};
  const qrWorker = harness.kiln.createWorker({ workerId: 'fuzz-worker', ...queues, pollMs: 10, reapMs: 1_000 });
  qrWorker.start();
  return {
    harness,
    routes,
    seeds,
    async close() {
      await qrWorker.stop(1_000);
      await harness.close();
    },
  };
}

/** Options of {@link fuzzRoutes}. */
export interface FuzzOptions {
  /** Cases in all, shared evenly by the routes (at least one each). */
  runs: number;
  seed: number;
  /** Only the route with this `METHOD url` (replay). */
  route?: string;
  /** fast-check's replay path of a failure (with `seed` and `route`). */
  path?: string;
  /** A request unanswered this long fails the property. */
  hangMs: number;
  /** How requests travel: fastify's inject (in-process, the default) or real HTTP to a listening server (fetch, i.e. undici). */
  transport?: 'inject' | 'http';
  /** Specs of routes route-specs.ts does not know (planted test routes). */
  specs?: Readonly<Record<string, SpecOf>>;
  /** Called after each route (progress). */
  onRoute?: (route: string, cases: number) => void;
}

/** What a fuzz run saw. */
export interface FuzzReport {
  cases: number;
  elapsedMs: number;
  statuses: Record<string, number>;
  codes: Record<string, number>;
  bodies: Record<string, number>;
  routes: number;
}

function count(map: Record<string, number>, key: string): void {
  map[key] = (map[key] ?? 0) + 1;
}

/** What the property reads of a response. */
interface Answer {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}

/** Sends a request and reads its whole answer. */
type Send = (request: FuzzRequest, signal: AbortSignal) => Promise<Answer>;

function injectSender(app: FastifyInstance): Send {
  return async (request) => {
    const res = await app.inject({ method: request.method as 'GET', url: request.url, headers: request.headers, ...(request.payload === undefined ? {} : { payload: request.payload }) });
    return { statusCode: res.statusCode, headers: res.headers, body: res.body };
  };
}

/**
 * Real HTTP with fetch (undici). What fetch will not send is left out: a body on GET or HEAD, a
 * Content-Length of our own (undici sets the true one; a wrong one is the inject pass's), and
 * header values it refuses (those cannot reach a server through it).
 */
function httpSender(origin: string): Send {
  return async (request, signal) => {
    const { 'content-length': _length, ...headers } = request.headers;
    const body = request.method === 'GET' || request.method === 'HEAD' || request.payload === undefined ? undefined : request.payload;
    const res = await fetch(`${origin}${request.url}`, { method: request.method, headers, signal, ...(body === undefined ? {} : { body }) });
    return { statusCode: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
  };
}

/** A request that got no answer in time. */
class HangError extends Error {}

/** Sends `request`, failing if no answer comes within `hangMs`. */
async function sendWithin(send: Send, request: FuzzRequest, hangMs: number): Promise<Answer> {
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      abort.abort();
      reject(new HangError(`no answer within ${hangMs} ms`));
    }, hangMs);
  });
  try {
    return await Promise.race([send(request, abort.signal), hang]);
  } finally {
    clearTimeout(timer);
  }
}

/** Why `res` breaks the property, or undefined when it holds. */
export function violation(method: string, res: { statusCode: number; headers: Record<string, unknown>; body: string }): string | undefined {
  const status = res.statusCode;
  if (status >= 500 && !(status === 503 && res.headers['retry-after'] !== undefined)) return `status ${status} (only a 503 with Retry-After may be >= 500): ${res.body.slice(0, 500)}`;
  if (status < 400 || method === 'HEAD') return undefined;
  let body: { statusCode?: unknown; code?: unknown };
  try {
    body = JSON.parse(res.body) as typeof body;
  } catch {
    return `error ${status} without a JSON envelope: ${res.body.slice(0, 200)}`;
  }
  if (typeof body.code !== 'string' || !Object.hasOwn(ERROR_CODES, body.code)) return `error ${status} with code ${String(body.code)}, not in docs/errors.md's catalogue: ${res.body.slice(0, 300)}`;
  const catalogued = ERROR_CODES[body.code as keyof typeof ERROR_CODES].status;
  if (catalogued !== status) return `error ${status} with code ${body.code}, which docs/errors.md gives status ${catalogued}: ${res.body.slice(0, 300)}`;
  if (body.statusCode !== status) return `error envelope says statusCode ${String(body.statusCode)} but the response is ${status}`;
  return undefined;
}

/** Fuzzes every route of `target` (or `options.route`); throws fast-check's report (seed, shrunk counterexample) on a failure. */
export async function fuzzRoutes(target: FuzzTarget, options: FuzzOptions): Promise<FuzzReport> {
  const hints = hintsOf(target.seeds);
  const specs = target.routes.map((route, index) => ({ route, index, spec: routeSpecOf(route, target.seeds, hints, options.specs), key: `${route.method} ${route.url}` }));
  const chosen = options.route === undefined ? specs : specs.filter((s) => s.key === options.route);
  if (chosen.length === 0) throw new Error(`http-fuzz: no route ${options.route}; routes: ${specs.map((s) => s.key).join(', ')}`);
  const perRoute = Math.max(1, Math.round(options.runs / chosen.length));
  const report: FuzzReport = { cases: 0, elapsedMs: 0, statuses: {}, codes: {}, bodies: {}, routes: chosen.length };
  let send = injectSender(target.harness.app);
  if (options.transport === 'http') {
    // Listens once per target, on loopback; the harness's close() closes it.
    target.origin ??= await target.harness.app.listen({ host: '127.0.0.1', port: 0 });
    send = httpSender(target.origin);
  }
  const started = performance.now();
  for (const { route, index, spec, key } of chosen) {
    // Each route its own seed, derived from the run's and the route's place, so one route replays alone.
    const seed = (options.seed + index * 7_919) | 0;
    // After a hang, shrinking would wait `hangMs` per attempt: the first hanging request is reported as it is.
    let hung = false;
    const property = fc.asyncProperty(requestsFor(route, spec, target.seeds), async (request) => {
      if (hung) return;
      const answers = await Promise.all(Array.from({ length: request.copies }, () => sendWithin(send, request, options.hangMs))).catch((err: unknown) => {
        hung = err instanceof HangError;
        throw err;
      });
      for (const res of answers) {
        report.cases += 1;
        count(report.statuses, String(res.statusCode));
        count(report.bodies, request.body);
        const problem = violation(request.method, res);
        if (problem !== undefined) throw new Error(problem);
        if (res.statusCode >= 400 && request.method !== 'HEAD') count(report.codes, String((JSON.parse(res.body) as { code?: unknown }).code));
      }
    });
    const params: Parameters<[FuzzRequest]> = { numRuns: perRoute, seed, ...(options.path === undefined ? {} : { path: options.path }) };
    try {
      await fc.assert(property, params);
    } catch (err) {
      const transport = options.transport === 'http' ? ' FUZZ_TRANSPORT=http' : '';
      const replay = `replay: FUZZ_SEED=${options.seed} FUZZ_ROUTE='${key}'${transport} npm run fuzz (add FUZZ_PATH=<path above> to go straight to the counterexample)`;
      // fast-check's message has the seed, path and shrunk counterexample; its cause, what broke.
      const cause = err instanceof Error && err.cause instanceof Error ? `\nviolation: ${err.cause.message}` : '';
      throw new Error(`http-fuzz: ${key} failed (route seed ${seed}); ${replay}\n${err instanceof Error ? err.message : String(err)}${cause}`);
    }
    options.onRoute?.(key, perRoute);
  }
  report.elapsedMs = performance.now() - started;
  return report;
}

/**
 * Heap used after a full GC, in bytes. `global.gc` when node runs with --expose-gc, otherwise the
 * same function obtained at run time (V8's flag set, then `gc` read from a fresh context), so the
 * check does not depend on how the test was started.
 */
export function heapAfterGc(): number {
  let gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** One summary line per aspect, for the test log and `npm run fuzz`. */
export function formatReport(report: FuzzReport, seed: number): string {
  const sorted = (m: Record<string, number>) =>
    Object.entries(m)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k}:${v}`)
      .join(' ');
  const rate = report.cases / Math.max(report.elapsedMs / 1000, 0.001);
  return [
    `http-fuzz: ${report.cases} cases over ${report.routes} routes in ${(report.elapsedMs / 1000).toFixed(1)} s (${rate.toFixed(0)} cases/s), seed ${seed}`,
    `  statuses: ${sorted(report.statuses)}`,
    `  error codes: ${sorted(report.codes)}`,
    `  bodies: ${sorted(report.bodies)}`,
  ].join('\n');
}

/**
 * The seed of a run: FUZZ_SEED, else `fallback` (the CI test's fixed seed: the same cases every
 * run, so CI never passes or fails by chance), else a fresh one (`npm run fuzz` explores; printed,
 * so a failure replays).
 */
export function seedFromEnv(fallback?: number): number {
  const text = process.env.FUZZ_SEED;
  if (text === undefined || text === '') return fallback ?? (Math.random() * 2 ** 31) | 0;
  const seed = Number(text);
  if (!Number.isInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, not ${text}`);
  return seed;
}
