/**
 * What is valid-looking for each route, by `METHOD url` as fastify registered it. Every route the
 * server registers needs an entry (a HEAD route fastify adds for a GET uses the GET's entry):
 * `routeSpecOf` throws for one that has none, so a new route cannot go unfuzzed. Routes with a
 * request schema derive their values from it (`fromSchema`); the pipelines' routes, which validate
 * in their handlers, say theirs here.
 */
import fc from 'fast-check';
import { ASSET_ID } from '../../../src/pipelines/thumbnails/input.ts';
import { multipartBody, type FuzzBody, type QueryPair } from './arbitraries.ts';
import { propertiesOf, queryPairsOf, textOf, valueOf, type Hints } from './schema-arbitrary.ts';
import type { FuzzSeeds } from './seeds.ts';

/** A route as fastify registered it (collected by an onRoute hook). */
export interface RegisteredRoute {
  method: string;
  url: string;
  schema?: { params?: unknown; querystring?: unknown; body?: unknown; headers?: unknown };
}

/** The valid-looking parts of a route's requests; the fuzzer mixes in everything else. */
export interface RouteSpec {
  /** Path parameter values by name (`*` for a wildcard). */
  params?: Record<string, fc.Arbitrary<string>>;
  /** Query parameters the route reads, for the weird queries too. */
  queryNames?: readonly string[];
  query?: fc.Arbitrary<QueryPair[]>;
  /** A JSON value the route accepts as its body. */
  json?: fc.Arbitrary<unknown>;
  /** Non-JSON bodies the route accepts (uploads). */
  bodies?: fc.Arbitrary<FuzzBody>;
}

/** How a route's spec is made from the route, the seeded values and the field hints. */
export type SpecOf = (route: RegisteredRoute, seeds: FuzzSeeds, hints: Hints) => RouteSpec;

/** Picks from `values`, or from `fallback` when there are none. */
function oneOf<T>(values: readonly T[], fallback: fc.Arbitrary<T>): fc.Arbitrary<T> {
  return values.length > 0 ? fc.constantFrom(...values) : fallback;
}

/** Known-good values by field name. */
export function hintsOf(seeds: FuzzSeeds): Hints {
  const ids = [...seeds.runIds, ...seeds.jobIds];
  return {
    id: oneOf(ids, fc.string()),
    runId: oneOf(seeds.runIds, fc.string()),
    before: oneOf(ids, fc.string()),
    queue: oneOf(seeds.queues, fc.constant('demo.sleep.prepare')),
    pipeline: fc.constantFrom(...seeds.pipelines),
    subjectId: oneOf([...seeds.subjectIds, ...seeds.assetIds], fc.string()),
    code: oneOf(seeds.errorCodes, fc.constant('DEMO_FAILURE')),
    ref: oneOf(seeds.artifactRefs, fc.constant(`sha256:${'0'.repeat(64)}`)),
    tenant: fc.constantFrom('fuzz', 'other'),
    // demo.sleep's input, so a submission gets past the pipeline's own check.
    input: fc.record({ delayMs: fc.integer({ min: 0, max: 50 }) }),
  };
}

/** Everything from the route's request schema. */
const fromSchema: SpecOf = (route, _seeds, hints) => {
  const params = Object.fromEntries(Object.entries(propertiesOf(route.schema?.params)).map(([name, s]) => [name, valueOf(s, hints, name).map(textOf)]));
  return {
    params,
    queryNames: Object.keys(propertiesOf(route.schema?.querystring)),
    query: queryPairsOf(route.schema?.querystring, hints),
    ...(route.schema?.body === undefined ? {} : { json: valueOf(route.schema.body as never, hints) }),
  };
};

/** A route that reads no parameters, query or body. */
export const nothing: SpecOf = () => ({});

const hex64 = fc.stringMatching(/^[0-9a-f]{64}$/);

/** QR options as JSON (typed) values, with a short `wait` so a render is not waited for long. */
const qrFields = fc.record(
  {
    content: fc.oneof(fc.string({ minLength: 1, maxLength: 40 }), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }), fc.constant('x'.repeat(2_400))),
    format: fc.constantFrom('png', 'svg', 'PNG', 'Svg'),
    size: fc.integer({ min: 64, max: 400 }),
    margin: fc.integer({ min: 0, max: 16 }),
    ecc: fc.constantFrom('L', 'M', 'Q', 'H', 'l'),
    fg: fc.constantFrom('#000', '#000000', '#112233ff', '#FFF'),
    bg: fc.constantFrom('#fff', '#ffffff', '#00000000', '#FFF'),
    wait: fc.integer({ min: 0, max: 30 }),
  },
  { requiredKeys: ['content', 'wait'] },
);

const qrScaleFields = fc.record({ content: fc.string({ minLength: 1, maxLength: 40 }), scale: fc.integer({ min: 1, max: 8 }), wait: fc.integer({ min: 0, max: 30 }) });

const qrJson = fc.oneof(qrFields, qrScaleFields);
const qrQuery = qrJson.map((v) => Object.entries(v).map(([k, x]) => [k, textOf(x)] as const));
const QR_NAMES = ['content', 'format', 'size', 'scale', 'margin', 'ecc', 'fg', 'bg', 'wait'];

/** An asset id: a seeded one or any the id pattern allows. */
function assetId(seeds: FuzzSeeds): fc.Arbitrary<string> {
  return fc.oneof(fc.constantFrom(...seeds.assetIds), fc.stringMatching(ASSET_ID, { size: 'xsmall' }));
}

/** Upload bodies: image bytes raw with a fitting (or octet-stream, or contradicting) type, or as a multipart file. */
function uploads(seeds: FuzzSeeds): fc.Arbitrary<FuzzBody> {
  const image = fc.constantFrom(...seeds.images);
  const rawType = fc.constantFrom('image/png', 'image/jpeg', 'image/svg+xml; charset=utf-8', 'application/octet-stream', 'IMAGE/PNG; x=y', 'image/gif');
  return fc.oneof(
    fc.tuple(image, rawType).map(([payload, contentType]) => ({ kind: 'upload-raw', payload, contentType })),
    multipartBody(image),
  );
}

/** The spec of each route, by `METHOD url`. */
const SPECS: Readonly<Record<string, SpecOf>> = {
  'GET /healthz': nothing,
  'GET /metrics': nothing,
  'POST /v1/runs': fromSchema,
  'GET /v1/runs': fromSchema,
  'GET /v1/runs/:id/attempts': fromSchema,
  'GET /v1/runs/:id': fromSchema,
  'POST /v1/runs/:id/cancel': fromSchema,
  'POST /v1/runs/:id/resume': fromSchema,
  'GET /v1/jobs': fromSchema,
  'GET /v1/jobs/:id': fromSchema,
  'POST /v1/jobs/:id/replay': fromSchema,
  'GET /v1/queues': nothing,
  'GET /v1/queues/activity': fromSchema,
  'POST /v1/queues/:queue/pause': fromSchema,
  'POST /v1/queues/:queue/resume': fromSchema,
  'POST /v1/queues/:queue/drain': fromSchema,
  'GET /v1/verify': fromSchema,
  'GET /v1/dead-letters': fromSchema,
  'GET /v1/cache/stats': nothing,
  'GET /v1/cache/entries': fromSchema,
  'GET /v1/publications': fromSchema,
  'GET /v1/artifacts/:ref': fromSchema,
  'GET /dashboard': nothing,
  'GET /dashboard/': nothing,
  'GET /dashboard/*': (_route, seeds) => ({ params: { '*': fc.constantFrom(...seeds.dashboardFiles) } }),
  'POST /v1/qr': () => ({ queryNames: ['wait'], json: qrJson }),
  'GET /v1/qr': () => ({ queryNames: QR_NAMES, query: qrQuery }),
  'GET /v1/qr/:hash': (_route, seeds) => ({ params: { hash: fc.oneof(oneOf(seeds.qrHashes, hex64), hex64, hex64.map((h) => h.toUpperCase())) } }),
  'GET /v1/requests/:id': (_route, seeds) => ({ params: { id: oneOf(seeds.runIds, fc.string()) } }),
  'PUT /v1/assets/:id': (_route, seeds) => ({ params: { id: assetId(seeds) }, bodies: uploads(seeds) }),
  'GET /v1/assets/:id': (route, seeds, hints) => ({ ...fromSchema(route, seeds, hints), params: { id: assetId(seeds) } }),
  'GET /v1/assets/:id/:profile': (_route, seeds) => ({ params: { id: assetId(seeds), profile: fc.constantFrom(...seeds.profiles, 'original', 'none') } }),
  'DELETE /v1/assets/:id': (_route, seeds) => ({ params: { id: assetId(seeds) } }),
};

/** The key of a route's spec: a HEAD route fastify derived from a GET shares the GET's. */
export function specKey(route: RegisteredRoute): string {
  return `${route.method === 'HEAD' ? 'GET' : route.method} ${route.url}`;
}

/** The spec of `route`; throws for a route no entry covers (add one above). */
export function routeSpecOf(route: RegisteredRoute, seeds: FuzzSeeds, hints: Hints, extra: Readonly<Record<string, SpecOf>> = {}): RouteSpec {
  const of = extra[specKey(route)] ?? SPECS[specKey(route)];
  if (!of) throw new Error(`http-fuzz: the route ${route.method} ${route.url} has no generator: add "${specKey(route)}" to test/support/http-fuzz/route-specs.ts`);
  return of(route, seeds, hints);
}
