/** Whole requests for one route: path, query, headers and body, valid-looking or hostile. */
import fc from 'fast-check';
import { binaryBody, contentTypeValue, headerSet, jsonBody, multipartBody, pathSegment, queryString, weirdText, type FuzzBody } from './arbitraries.ts';
import type { RegisteredRoute, RouteSpec } from './route-specs.ts';
import type { FuzzSeeds } from './seeds.ts';

/** One request as the fuzzer sends it. */
export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
  /** What kind of body it is (`json-valid`, `multipart-fault-3`, ...), for the summary. */
  body: string;
  /** Sent this many times at once (races: one Idempotency-Key twice, two uploads of one asset). */
  copies: number;
}

/** The path of `route` with each `:param` (and a `*`) filled in. */
function pathOf(route: RegisteredRoute, spec: RouteSpec): fc.Arbitrary<string> {
  const parts = route.url.split('/').map((segment) => {
    if (segment.startsWith(':')) return pathSegment(spec.params?.[segment.slice(1)]);
    if (segment === '*') return pathSegment(spec.params?.['*']);
    return fc.constant(segment);
  });
  return fc.tuple(...parts).map((segments) => segments.join('/'));
}

/** Bodies for the route's method: mostly none on reads; on writes its own, JSON of every shape, bytes, multipart. */
function bodyOf(method: string, spec: RouteSpec, seeds: FuzzSeeds): fc.Arbitrary<FuzzBody | undefined> {
  const json = jsonBody(spec.json);
  const garbage = fc.oneof(binaryBody, multipartBody(fc.constantFrom(...seeds.images, Buffer.from('not an image'))));
  if (method === 'GET' || method === 'HEAD' || method === 'DELETE') {
    return fc.oneof({ arbitrary: fc.constant(undefined), weight: 8 }, { arbitrary: json, weight: 1 }, { arbitrary: garbage, weight: 1 });
  }
  return fc.oneof(
    { arbitrary: spec.bodies ?? json, weight: 4 },
    { arbitrary: json, weight: 4 },
    { arbitrary: garbage, weight: 2 },
    { arbitrary: fc.constant(undefined), weight: 1 },
  );
}

/** A Content-Length that disagrees with the body, or is not a number at all. */
function wrongLength(length: number): fc.Arbitrary<string> {
  return fc.oneof(
    fc.integer({ min: -5, max: 5 }).filter((d) => d !== 0 && length + d >= 0).map((d) => String(length + d)),
    fc.constantFrom('abc', '-1', '1e3', ' 1', '99999999999999999999', ''),
  );
}

/** Requests for `route`, mixing valid-looking parts (from `spec`) with hostile ones. */
export function requestsFor(route: RegisteredRoute, spec: RouteSpec, seeds: FuzzSeeds): fc.Arbitrary<FuzzRequest> {
  const names = spec.queryNames ?? [];
  const query = fc.oneof(
    { arbitrary: fc.constant(''), weight: 2 },
    { arbitrary: queryString(names, spec.query ?? fc.constant([])), weight: 5 },
    { arbitrary: weirdText.map((t) => t.replace(/[#\s]/g, '')), weight: 1 },
  );
  return fc
    .record({
      path: pathOf(route, spec),
      query,
      headers: headerSet(seeds.etags),
      body: bodyOf(route.method, spec, seeds),
      typeChoice: fc.nat(9),
      otherType: contentTypeValue,
      length: fc.option(fc.nat(), { freq: 10 }),
      copies: fc.oneof({ arbitrary: fc.constant(1), weight: 8 }, { arbitrary: fc.integer({ min: 2, max: 4 }), weight: 1 }),
    })
    .chain(({ path, query: q, headers, body, typeChoice, otherType, length, copies }) => {
      const all: Record<string, string> = { ...headers };
      // Mostly the body's own Content-Type; sometimes another one, or none.
      const type = typeChoice < 7 ? body?.contentType : typeChoice < 9 ? otherType : undefined;
      if (type !== undefined) all['content-type'] = type;
      const base: FuzzRequest = { method: route.method, url: q === '' ? path : `${path}?${q}`, headers: all, body: body?.kind ?? 'none', copies };
      if (body !== undefined) base.payload = body.payload;
      if (length === null) return fc.constant(base);
      const size = body === undefined ? 0 : Buffer.byteLength(body.payload);
      return wrongLength(size).map((value) => ({ ...base, headers: { ...all, 'content-length': value } }));
    });
}
