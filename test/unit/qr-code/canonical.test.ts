import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { canonicalJson, sha256Hex } from '../../../src/index.ts';
import { canonicalQrRequest, QR_ENCODER_VERSION, qrContentHash, RENDERER_IDENTITY } from '../../../src/pipelines/qr-code/canonical.ts';
import { parseQrRequest, type QrRequestSource } from '../../../src/pipelines/qr-code/options.ts';
import { renderQr } from '../../../src/pipelines/qr-code/render.ts';

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Hash and bytes of each spelling; asserts they are all the same. */
function assertEquivalent(spellings: [source: QrRequestSource, raw: Record<string, unknown>][]): void {
  const first = parseQrRequest(spellings[0]?.[1], spellings[0]?.[0] ?? 'json');
  const hash = qrContentHash(first);
  const bytes = Buffer.from(renderQr(first).bytes);
  for (const [source, raw] of spellings) {
    const options = parseQrRequest(raw, source);
    assert.equal(qrContentHash(options), hash, `same hash for ${JSON.stringify(raw)}`);
    assert.deepEqual(canonicalJson(canonicalQrRequest(options)), canonicalJson(canonicalQrRequest(first)));
    assert.ok(Buffer.from(renderQr(options).bytes).equals(bytes), `same bytes for ${JSON.stringify(raw)}`);
  }
}

describe('equivalent requests have one content hash and byte-identical output', () => {
  const content = 'https://example.com/a?b=c&d=é';

  test('any key order, defaults omitted or spelled out, enums and colors in any spelling (PNG)', () => {
    assertEquivalent([
      ['json', { content }],
      ['json', { format: 'png', content }],
      ['json', { bg: '#FFFFFF', fg: '#000', ecc: 'M', margin: 4, size: 512, format: 'png', content }],
      ['json', { content, size: 512, margin: 4, ecc: 'm', fg: '#000000ff', bg: '#fff', format: 'PNG' }],
      ['json', { fg: '#000000', content, bg: '#ffffffFF', format: 'Png' }],
      ['query', { content, size: '512', margin: '4', ecc: 'M', format: 'png', fg: '#000', bg: '#fff' }],
      ['query', { format: 'PNG', content }],
    ]);
  });

  test('the same for SVG with scale and translucent colors', () => {
    assertEquivalent([
      ['json', { content, format: 'svg', scale: 6, fg: '#1D355780', bg: '#FFFFFF00' }],
      ['json', { bg: '#ffffff00', scale: 6, fg: '#1d355780', format: 'SVG', content, ecc: 'M', margin: 4 }],
      ['query', { scale: '6', format: 'sVg', content, fg: '#1d355780', bg: '#ffffff00' }],
    ]);
  });

  test('the canonical form has every field but the unused one of size/scale, keys sorted', () => {
    assert.deepEqual(Object.keys(canonicalQrRequest(parseQrRequest({ size: 256, content: 'x' }, 'json'))), [
      'bg',
      'content',
      'ecc',
      'fg',
      'format',
      'margin',
      'size',
    ]);
    const scaled = canonicalQrRequest(parseQrRequest({ scale: 3, content: 'x' }, 'json'));
    assert.deepEqual(scaled, { bg: '#ffffffff', content: 'x', ecc: 'M', fg: '#000000ff', format: 'png', margin: 4, scale: 3 });
  });

  test('rendering the same options again gives the same bytes', () => {
    for (const format of ['png', 'svg']) {
      const options = parseQrRequest({ content: 'again', format, size: 700 }, 'json');
      assert.ok(Buffer.from(renderQr(options).bytes).equals(Buffer.from(renderQr(options).bytes)));
    }
  });
});

describe('content hash', () => {
  test('is sha256 of the canonical JSON of the canonical request and the renderer identity', () => {
    const options = parseQrRequest({ content: 'x', ecc: 'q' }, 'json');
    const expected = sha256Hex(canonicalJson({ request: canonicalQrRequest(options), renderer: RENDERER_IDENTITY }));
    assert.equal(qrContentHash(options), expected);
    assert.match(expected, /^[0-9a-f]{64}$/);
  });

  test('changes when any field changes', () => {
    const base = { content: 'x', format: 'png', size: 512, margin: 4, ecc: 'M', fg: '#000', bg: '#fff' };
    const variants: Record<string, unknown>[] = [
      base,
      { ...base, content: 'y' },
      { ...base, format: 'svg' },
      { ...base, size: 513 },
      { ...base, size: undefined, scale: 4 },
      { ...base, margin: 3 },
      { ...base, ecc: 'L' },
      { ...base, fg: '#001' },
      { ...base, bg: '#ffffffef' },
    ];
    const hashes = variants.map((raw) =>
      qrContentHash(parseQrRequest(Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined)), 'json')),
    );
    assert.equal(new Set(hashes).size, variants.length);
  });

  test('the renderer identity names the installed, exactly pinned qr package', () => {
    const entry = createRequire(import.meta.url).resolve('qr');
    const installed = JSON.parse(readFileSync(join(dirname(entry), 'package.json'), 'utf8')) as { name: string; version: string };
    assert.equal(installed.name, 'qr');
    assert.equal(installed.version, QR_ENCODER_VERSION);
    const ours = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { dependencies: Record<string, string> };
    assert.equal(ours.dependencies.qr, QR_ENCODER_VERSION, 'package.json pins qr to this exact version');
    assert.deepEqual({ ...RENDERER_IDENTITY }, { encoder: 'qr', encoderVersion: QR_ENCODER_VERSION, profile: 1 });
  });

  // If one of these fails, the renderer's output (or the canonical form) changed: old caches
  // would serve different bytes under the same hash. Bump RENDERER_IDENTITY.profile (or the
  // pinned encoder), then update the expected values here.
  test('golden: known requests keep their content hash and exact output bytes', () => {
    const golden: [raw: Record<string, unknown>, contentHash: string, bytesSha256: string][] = [
      [
        { content: 'https://kiln.dev/golden?x=1' },
        'ffa1785340d8dc6ee0cbd9e1fefa11d5b242b8fc275416f1ce6ab5542973b357',
        '1adf79c53f2b18caf92e8e2018f0ba74901f9f338721f03a4b14441917891f54',
      ],
      [
        { content: 'https://kiln.dev/golden?x=1', format: 'svg' },
        '44803b3d0f870430fcbdcaf4b644514c3019cc049a721153ed369df71a2440e9',
        '4f5e4f9ec1e655292d1cdf1ce45db8a2709e09394440dae4503cc6110148ffdf',
      ],
      [
        { content: 'Grüße 🚀', fg: '#1d355780', bg: '#ffffff00', size: 333, ecc: 'H', margin: 2 },
        'c1a3b900dd68ec17511004eacdd2953bcd9cbeebde9f7c51c0cfd4dfd16fe6aa',
        'f193b902ff55f02cee5ad8449de78e0680cbeda3f14447c8bfe8c38aa9ebd190',
      ],
    ];
    for (const [raw, contentHash, bytesSha256] of golden) {
      const options = parseQrRequest(raw, 'json');
      assert.equal(qrContentHash(options), contentHash, JSON.stringify(raw));
      assert.equal(sha256(renderQr(options).bytes), bytesSha256, JSON.stringify(raw));
    }
  });
});
