import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { PipelineError } from '../../../src/index.ts';
import { QR_MAX_CONTENT_BYTES, type QrEcc } from '../../../src/pipelines/qr-code/capacity.ts';
import { parseQrRequest } from '../../../src/pipelines/qr-code/options.ts';
import { renderQr } from '../../../src/pipelines/qr-code/render.ts';
import { decodeQr, decodeQrSymbols } from '../../support/qr-decode.ts';

const FORMATS = ['png', 'svg'] as const;

/** Printable ASCII of exactly `bytes` bytes (varied, so the mask and data look like real content). */
function asciiOfBytes(bytes: number): string {
  const text = 'The quick brown fox jumps over the lazy dog 0123456789 ?&=/:;,.!#%+-_~ ';
  return text.repeat(Math.ceil(bytes / text.length)).slice(0, bytes);
}

/** Renders a raw JSON request and asserts that the real decoder reads back exactly `content`. */
async function assertRoundTrip(raw: Record<string, unknown> & { content: string }): Promise<void> {
  const options = parseQrRequest(raw, 'json');
  const image = renderQr(options);
  const symbols = await decodeQrSymbols(image.bytes, image.mediaType);
  assert.equal(symbols.length, 1, `one symbol decoded from ${image.mediaType} for ${JSON.stringify(raw).slice(0, 80)}`);
  const [symbol] = symbols;
  assert.equal(symbol?.text, raw.content);
  // The payload is the content's UTF-8 bytes, with no ECI header, at the requested level.
  assert.deepEqual(Buffer.from(symbol?.bytes ?? []), Buffer.from(raw.content, 'utf8'));
  assert.equal(symbol?.hasEci, false);
  assert.equal(symbol?.ecLevel, options.ecc);
}

describe('every rendered QR code decodes back to its exact content (zxing; SVG via resvg)', () => {
  const contents: [name: string, content: string][] = [
    ['ASCII', 'Hello, kiln!'],
    ['a URL with a query string', 'https://example.com/search?q=kiln%20qr&lang=en&page=2#results'],
    ['accented Latin', 'Crème brûlée à la française — ça coûte 5 €'],
    ['CJK', '東京都渋谷区 中文测试 한국어 テキスト'],
    ['emoji, including a ZWJ sequence', 'Launch 🚀 party 🎉 family 👩‍👩‍👧‍👦'],
    ['numeric only', '0123456789012345678901234567890'],
    ['one character', 'x'],
    ['one multi-byte character', '😀'],
    ['newlines and tabs', 'BEGIN:VCARD\nFN:Ada\tLovelace\nEND:VCARD'],
  ];
  for (const [name, content] of contents) {
    for (const format of FORMATS) {
      test(`${name} as ${format}`, () => assertRoundTrip({ content, format }));
    }
  }

  for (const ecc of ['L', 'M', 'Q', 'H'] as const satisfies readonly QrEcc[]) {
    for (const format of FORMATS) {
      test(`the longest content ecc ${ecc} accepts (${QR_MAX_CONTENT_BYTES[ecc]} bytes) as ${format}; one byte more is 422`, async () => {
        const content = asciiOfBytes(QR_MAX_CONTENT_BYTES[ecc]);
        await assertRoundTrip({ content, ecc, format });
        assert.throws(
          () => parseQrRequest({ content: `${content}a`, ecc, format }, 'json'),
          (err: unknown) => err instanceof PipelineError && err.code === 'QR_CONTENT_TOO_LONG' && err.statusCode === 422,
        );
      });
    }
  }

  test('the longest multi-byte content at ecc M (777 x "€" = 2331 bytes) as png', () => assertRoundTrip({ content: '€'.repeat(777) }));

  const looks: [name: string, raw: Record<string, unknown>][] = [
    ['colored on a tinted background', { fg: '#1d3557', bg: '#f1faee' }],
    ['light on dark (inverted)', { fg: '#fff', bg: '#000' }],
    ['on a transparent background', { bg: '#ffffff00' }],
    ['with a translucent foreground', { fg: '#00000099' }],
    ['without a quiet zone', { margin: 0 }],
    ['with the widest quiet zone', { margin: 16 }],
    ['at the smallest size', { size: 64 }],
    ['at a size that leaves pixels over', { size: 333 }],
    ['at scale 2', { scale: 2 }],
    ['at ecc L', { ecc: 'L' }],
    ['at ecc Q', { ecc: 'Q' }],
    ['at ecc H', { ecc: 'H' }],
  ];
  for (const [name, raw] of looks) {
    for (const format of FORMATS) {
      test(`a URL ${name} as ${format}`, () => assertRoundTrip({ content: 'https://kiln.dev/qr?id=42&v=7', format, ...raw }));
    }
  }

  test('random Unicode strings decode exactly (byte mode holds UTF-8 as the decoder reads it)', async () => {
    const text = fc.oneof(
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
      fc.string({ unit: fc.constantFrom('a', '\\', '~', '¥', 'é', 'ｱ', 'カ', '½', ' ', '\n'), minLength: 1, maxLength: 12 }),
    );
    await fc.assert(
      fc.asyncProperty(text, async (content) => {
        const image = renderQr(parseQrRequest({ content, scale: 3, ecc: 'L' }, 'json'));
        assert.deepEqual(await decodeQr(image.bytes, image.mediaType), [content]);
      }),
      { numRuns: 60, seed: 20_240_401 },
    );
  });
});
