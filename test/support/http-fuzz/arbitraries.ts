/**
 * The hostile parts of a request, as fast-check arbitraries: path segments, query strings, header
 * values and bodies that a client (or an attacker) could send, valid or not. Route-specific valid
 * values come from route-specs.ts; this file knows no route.
 */
import fc from 'fast-check';

/** A body as sent: its bytes and the Content-Type that naturally goes with them (if any). */
export interface FuzzBody {
  kind: string;
  payload: string | Buffer;
  contentType?: string;
}

/** Strings that have broken parsers before: dots, percent garbage, NUL, number-likes, prototype names. */
const NASTY = [
  '.', '..', '...', '%', '%%', '%2e', '%2e%2e', '%2E%2E%2F', '%00', '%ZZ', '%E0%A4%A', '%C0%AF', '%uD800', '%FF%FE',
  '~', '*', '-', '_', ' ', '+', '%20', '%2F', '%5C', '\\', '../../etc/passwd', '..%2F..%2Fetc%2Fpasswd', '%252e%252e',
  'null', 'undefined', 'true', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty',
  'NaN', 'Infinity', '-Infinity', '-0', '0', '1e2', '2.5', '-1', '0x10', '1e308', '9007199254740993', '99999999999999999999999',
  'sha256:', 'sha256:' + '0'.repeat(64), 'sha256:' + 'G'.repeat(64), 'a'.repeat(64), 'F'.repeat(64),
  '\u0000', '\uFEFF', '\u202E', '\uFFFF', '\u{1F600}', 'é', 'ǅ', '\u0130', '\u0085', '\r\n', '\t',
];

/** Single UTF-16 code units, lone surrogates included (they are not valid in UTF-8). */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));

/** Text of any shape: nasty constants, unicode (graphemes, lone surrogates), ASCII, very long. */
export const weirdText: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...NASTY), weight: 4 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 24 }), weight: 2 },
  { arbitrary: fc.string({ unit: codeUnit, maxLength: 12 }), weight: 1 },
  { arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 40 }), weight: 2 },
  { arbitrary: fc.tuple(fc.constantFrom('a', '%', '.', 'é', '0'), fc.integer({ min: 150, max: 9_000 })).map(([c, n]) => c.repeat(n)), weight: 1 },
);

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * How a value is put into a URL: percent-encoded (what a correct client does), raw but with the
 * URL's own delimiters escaped (unicode, dots and stray `%` left as they are), or fully raw.
 */
function placeInUrl(value: string, mode: number): string {
  // A lone surrogate has no UTF-8 form: a client encodes it as U+FFFD (mode 0) or sends it raw.
  if (mode === 0) return encodeURIComponent(value.replace(LONE_SURROGATE, '\uFFFD'));
  if (mode === 1) return value.replace(/[/?#&=\s]/g, (c) => encodeURIComponent(c.replace(LONE_SURROGATE, '\uFFFD')));
  return value.replace(/[/?#\s]/g, '');
}

/** A path segment from a valid-looking value or weird text, encoded one of three ways. */
export function pathSegment(valid: fc.Arbitrary<string> | undefined): fc.Arbitrary<string> {
  const value = valid ? fc.oneof({ arbitrary: valid, weight: 3 }, { arbitrary: weirdText, weight: 2 }) : weirdText;
  return fc.tuple(value, fc.nat(2)).map(([v, mode]) => placeInUrl(v, mode));
}

/** Values a query-string parameter might hold, most of them wrong for any schema. */
export const queryValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('1e2', '2.5', '-0', 'NaN', '0', '1', '-1', '500', '501', '00', '0x10', ' 5', '5 ', '', '1'.repeat(400), '9007199254740993', 'true', '[]', '{}'),
  fc.integer().map(String),
  fc.double().map(String),
  weirdText,
);

/** A query parameter: name (the route's own names, or weird ones) and value. */
export type QueryPair = readonly [string, string];

/** A query string as sent: pairs (duplicates allowed), bracketed names, raw or encoded. */
export function queryString(names: readonly string[], validPairs: fc.Arbitrary<QueryPair[]>): fc.Arbitrary<string> {
  const name = fc.oneof(
    ...(names.length > 0 ? [{ arbitrary: fc.constantFrom(...names), weight: 4 }] : []),
    { arbitrary: fc.constantFrom('__proto__', 'constructor', 'a[b]', 'limit[]', 'toString', ''), weight: 1 },
    { arbitrary: weirdText, weight: 1 },
  );
  const weird = fc.array(fc.tuple(name, queryValue), { maxLength: 6 });
  // A valid query with some of its pairs repeated or appended with junk.
  const mixed = fc.tuple(validPairs, weird).map(([v, w]) => [...v, ...w.slice(0, 1)]);
  return fc
    .tuple(fc.oneof({ arbitrary: validPairs, weight: 4 }, { arbitrary: weird, weight: 2 }, { arbitrary: mixed, weight: 1 }), fc.nat(2))
    .map(([pairs, mode]) => pairs.map(([k, v]) => `${placeInUrl(k, mode)}=${placeInUrl(v, mode)}`).join('&'));
}

/**
 * A header value Node's HTTP client would send (tab, printable ASCII and Latin-1 obs-text): the
 * server must cope with anything that can arrive on the wire.
 */
const headerText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'\t !"#%\',;=ABCXYZabcxyz0189/_-*:~'.split(''), '\u00e9', '\u00ff', '\u0080'), maxLength: 40 }),
  fc.string({ unit: 'binary-ascii', maxLength: 30 }).map((s) => s.replace(/[^\t\x20-\x7e]/g, '')),
  fc.integer({ min: 200, max: 6_000 }).map((n) => 'x'.repeat(n)),
);

/** Content-Type values: real ones, with parameters in any case, and garbage. */
export const contentTypeValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    'application/json', 'application/json; charset=utf-8', 'Application/JSON;charset=UTF-8', 'application/json;;;', 'application/json; charset=latin1',
    'application/json ; x="y;z"', 'text/plain', 'text/html', 'application/x-www-form-urlencoded', 'application/*', '*/*', '', ';', ' ',
    'multipart/form-data', 'multipart/form-data; boundary=', 'multipart/form-data; boundary="quoted"', 'Multipart/Form-Data; BOUNDARY=x',
    'multipart/mixed; boundary=x', 'image/png', 'image/svg+xml; charset=utf-8', 'image/', 'image/*', 'IMAGE/JPEG', 'application/octet-stream',
    'application/octet-stream; x', 'image/png; boundary=x', 'application/jsonx', 'application/json-patch+json', 'application/problem+json',
  ),
  headerText,
);

/** Optional request headers, each present or not: the ones kiln reads and a few it must ignore. */
export function headerSet(etags: readonly string[]): fc.Arbitrary<Record<string, string>> {
  const tag = etags.length > 0 ? fc.constantFrom(...etags) : fc.constant('"x"');
  return fc.record(
    {
      // A few keys over and over, so one is reused with another body (and concurrently, see `copies`).
      'idempotency-key': fc.oneof(fc.constantFrom('k1', 'k2', 'k3'), fc.uuid(), fc.constantFrom('', ' ', 'x'.repeat(255), 'x'.repeat(256)), headerText),
      'if-none-match': fc.oneof(tag, tag.map((t) => `W/${t}`), tag.map((t) => `"a", ${t}`), fc.constantFrom('*', '""', 'W/', ',,,'), headerText),
      accept: fc.oneof(fc.constantFrom('*/*', 'application/json', 'image/png', 'text/html;q=0.9,*/*;q=0.1', ''), headerText),
      authorization: fc.oneof(fc.constantFrom('Bearer ', 'Bearer x', 'Basic Zm9vOmJhcg==', 'bearer', ''), headerText),
      traceparent: fc.oneof(
        fc.constantFrom('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', '00-00000000000000000000000000000000-0000000000000000-00', 'ff-x-y-z', ''),
        headerText,
      ),
      'accept-encoding': fc.constantFrom('gzip', 'br, gzip;q=0', 'identity', '*'),
      'x-forwarded-for': headerText,
      // fastify's router reads these for route constraints.
      'accept-version': fc.oneof(fc.constantFrom('1.x', '*', '1.2.3', ''), headerText),
      host: fc.oneof(fc.constantFrom('localhost', 'example.com:99999', '[::1]', '', 'a'.repeat(300)), headerText),
    },
    { requiredKeys: [] },
  );
}

/** A JSON tree serialized by hand, so `__proto__` stays an own key (JSON.stringify would drop it). */
type JsonTree = { obj: [string, JsonTree][] } | { arr: JsonTree[] } | { lit: string };

function serialize(tree: JsonTree): string {
  if ('lit' in tree) return tree.lit;
  if ('arr' in tree) return `[${tree.arr.map(serialize).join(',')}]`;
  return `{${tree.obj.map(([k, v]) => `${JSON.stringify(k)}:${serialize(v)}`).join(',')}}`;
}

const jsonKey = fc.oneof(
  { arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', 'then', 'pipeline', 'input', 'content', 'wait', 'reason'), weight: 1 },
  { arbitrary: fc.string({ maxLength: 8 }), weight: 3 },
);

const jsonLiteral = fc.oneof(
  fc.jsonValue({ maxDepth: 0 }).map((v) => JSON.stringify(v)),
  fc.constantFrom('1e308', '-0', '9007199254740993', '1.0', '0.1e-400', '"\\ud800"', '"\\u0000"', 'true', 'null', '{}', '[]'),
);

const { tree: jsonTree } = fc.letrec<{ tree: JsonTree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    jsonLiteral.map((lit) => ({ lit })),
    fc.array(fc.tuple(jsonKey, tie('tree')), { maxLength: 5 }).map((obj) => ({ obj })),
    fc.array(tie('tree'), { maxLength: 5 }).map((arr) => ({ arr })),
  ),
}));

/** Nesting `depth` levels deep, as arrays or as objects. */
function deepJson(depth: number, objects: boolean): string {
  return objects ? '{"a":'.repeat(depth) + '1' + '}'.repeat(depth) : '['.repeat(depth) + ']'.repeat(depth);
}

/** A JSON value text that breaks expectations: odd keys, deep, huge, number edge cases, odd strings. */
const hostileValue: fc.Arbitrary<string> = fc.oneof(
  jsonTree.map(serialize),
  fc.tuple(fc.integer({ min: 50, max: 5_000 }), fc.boolean()).map(([d, o]) => deepJson(d, o)),
  fc.integer({ min: 100, max: 60_000 }).map((n) => JSON.stringify('é'.repeat(n))),
  fc.constantFrom('1e308', '-0', '9007199254740993', '-1', '0.5', '""', '"\\u0000"', '"\\ud800"', 'null', '[]', '{}'),
  weirdText.map((t) => JSON.stringify(t)),
);

/** Texts that are not JSON, or only nearly. */
const invalidJson = fc.oneof(
  fc.constantFrom('{', '}', '{"a":}', 'nul', "{'a':1}", '[1,]', '{"a":1,}', '\uFEFF', '\uFEFF{}', '{"a":1}garbage', 'NaN', '1e999', '"', '\u0000', '{"a":"\u0001"}', '{"__proto__":', '[' + ','.repeat(50) + ']'),
  fc.json().chain((text) => fc.nat(Math.max(0, text.length - 1)).map((cut) => text.slice(0, cut))),
);

/** JSON bodies of every shape: valid-looking ones (`valid`), random JSON, hostile keys, deep, huge, broken. */
export function jsonBody(valid: fc.Arbitrary<unknown> | undefined): fc.Arbitrary<FuzzBody> {
  const json = (kind: string) => (payload: string): FuzzBody => ({ kind, payload, contentType: 'application/json' });
  const validArb = valid ?? fc.constant({});
  return fc.oneof(
    { arbitrary: validArb.map((v) => JSON.stringify(v)).map(json('json-valid')), weight: 6 },
    // A valid body with one entry added, or one of its fields replaced, by a hostile value.
    {
      arbitrary: fc.tuple(validArb, jsonKey, hostileValue, fc.nat()).map(([v, k, hostile, pick]) => {
        if (typeof v !== 'object' || v === null || Array.isArray(v)) return JSON.stringify(v);
        const keys = Object.keys(v);
        const key = keys.length > 0 && pick % 2 === 0 ? keys[pick % keys.length]! : k;
        const { [key]: _replaced, ...rest } = v as Record<string, unknown>;
        const text = JSON.stringify(rest);
        return `{${JSON.stringify(key)}:${hostile}${text.length > 2 ? ',' : ''}${text.slice(1)}`;
      }).map(json('json-valid-plus')),
      weight: 3,
    },
    { arbitrary: fc.json({ maxDepth: 4 }).map(json('json-random')), weight: 2 },
    { arbitrary: jsonTree.map(serialize).map(json('json-keys')), weight: 2 },
    { arbitrary: fc.tuple(fc.integer({ min: 50, max: 20_000 }), fc.boolean()).map(([d, o]) => deepJson(d, o)).map(json('json-deep')), weight: 1 },
    { arbitrary: fc.integer({ min: 1_000, max: 80_000 }).map((n) => `{"pipeline":"${'x'.repeat(n)}"}`).map(json('json-huge')), weight: 1 },
    { arbitrary: invalidJson.map(json('json-invalid')), weight: 2 },
    { arbitrary: fc.constant('').map(json('json-empty')), weight: 1 },
  );
}

/** Raw bytes: garbage, empty, or big. */
export const binaryBody: fc.Arbitrary<FuzzBody> = fc.oneof(
  fc.uint8Array({ maxLength: 512 }).map((b) => ({ kind: 'binary', payload: Buffer.from(b), contentType: 'application/octet-stream' })),
  fc.constant({ kind: 'empty', payload: Buffer.alloc(0) }),
  fc.integer({ min: 60_000, max: 200_000 }).map((n) => ({ kind: 'binary-big', payload: Buffer.alloc(n, 0x41), contentType: 'application/octet-stream' })),
);

const CRLF = '\r\n';

/**
 * multipart/form-data bodies around `files` (valid-looking file bytes): well-formed ones and every
 * framing fault (no or wrong boundary, cut short, broken part headers, no file part, two files).
 */
export function multipartBody(files: fc.Arbitrary<Buffer>): fc.Arbitrary<FuzzBody> {
  const boundary = fc.oneof(fc.constantFrom('X-BOUNDARY', 'a', '----WebKitFormBoundary7MA4YWxkTrZu0gW'), fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 70 }).filter((s) => !/[\s";]/.test(s)));
  const partType = fc.oneof(fc.constantFrom('image/png', 'image/svg+xml', 'application/octet-stream', 'text/plain'), contentTypeValue);
  const filename = fc.oneof(fc.constantFrom('a.png', '../../x', ''), weirdText.map((s) => s.replace(/["\r\n]/g, '')));
  return fc
    .record({ boundary, file: files, partType, filename, fault: fc.nat(9), cut: fc.nat(), header: weirdText })
    .map(({ boundary: b, file, partType: type, filename: name, fault, cut, header }) => {
      const head = `--${b}${CRLF}Content-Disposition: form-data; name="file"; filename="${name}"${CRLF}Content-Type: ${type}${CRLF}${CRLF}`;
      const tail = `${CRLF}--${b}--${CRLF}`;
      let payload = Buffer.concat([Buffer.from(head, 'latin1'), file, Buffer.from(tail)]);
      let declared = `multipart/form-data; boundary=${b}`;
      if (fault === 1) declared = 'multipart/form-data';
      if (fault === 2) declared = `multipart/form-data; boundary=${b}x`;
      if (fault === 3) payload = payload.subarray(0, cut % Math.max(1, payload.length));
      if (fault === 4) payload = Buffer.from(`--${b}${CRLF}${header}${CRLF}${CRLF}data${tail}`, 'latin1');
      if (fault === 5) payload = Buffer.from(`--${b}${CRLF}Content-Disposition: form-data; name="field"${CRLF}${CRLF}value${tail}`);
      if (fault === 6) payload = Buffer.concat([Buffer.from(head, 'latin1'), file, Buffer.from(`${CRLF}--${b}${CRLF}`), Buffer.from(head.slice(b.length + 4), 'latin1'), file, Buffer.from(tail)]);
      if (fault === 7) payload = Buffer.from(payload.toString('latin1').replaceAll(CRLF, '\n'), 'latin1');
      if (fault === 8) payload = Buffer.alloc(0);
      return { kind: fault === 0 ? 'multipart' : `multipart-fault-${fault}`, payload, contentType: declared };
    });
}
