/**
 * Decodes QR images with real decoders, for tests: PNG bytes go straight to zxing-wasm (its own
 * image decoder reads the file), SVG is rasterized with @resvg/resvg-js on a white background
 * first. zxing-wasm loads the `.wasm` shipped in the package (by default it would fetch it from
 * a CDN, which fails offline).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Resvg } from '@resvg/resvg-js';
import { prepareZXingModule, readBarcodes, type ReaderOptions, type ReadResult } from 'zxing-wasm/reader';

/** One decoded symbol, with what tests may want to check besides the text. */
export interface DecodedQr {
  /** The content as zxing transcodes it (`Plain` text mode: control characters kept as they are). */
  text: string;
  /** The raw byte-mode payload. */
  bytes: Uint8Array;
  /** Error-correction level as zxing reports it: `L`, `M`, `Q` or `H`. */
  ecLevel: string;
  /** QR version (1..40). */
  version: string;
  /** Whether the symbol carries an ECI designator. */
  hasEci: boolean;
}

const READER_OPTIONS: ReaderOptions = { formats: ['QRCode'], textMode: 'Plain', tryHarder: true };

let ready: Promise<unknown> | undefined;

/** Instantiates zxing from the local `.wasm` once per process. */
function loadZxing(): Promise<unknown> {
  ready ??= (async () => {
    const wasmPath = createRequire(import.meta.url).resolve('zxing-wasm/reader/zxing_reader.wasm');
    const file = await readFile(wasmPath);
    const wasmBinary = file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength);
    return prepareZXingModule({ overrides: { wasmBinary }, fireImmediately: true });
  })();
  return ready;
}

/** RGBA pixels of an SVG rendered at its own size over white. */
function rasterizeSvg(svg: Uint8Array): { data: Uint8ClampedArray; width: number; height: number } {
  const image = new Resvg(Buffer.from(svg), { background: 'white', font: { loadSystemFonts: false } }).render();
  return { data: new Uint8ClampedArray(image.pixels), width: image.width, height: image.height };
}

/** Every QR symbol found in a PNG or SVG image, with details. */
export async function decodeQrSymbols(bytes: Uint8Array, mediaType: string): Promise<DecodedQr[]> {
  await loadZxing();
  let results: ReadResult[];
  if (mediaType.startsWith('image/png')) {
    results = await readBarcodes(new Uint8Array(bytes), READER_OPTIONS);
  } else if (mediaType.startsWith('image/svg+xml')) {
    const pixels = rasterizeSvg(bytes);
    // zxing-wasm reads any { data, width, height } like an ImageData (there is none in Node).
    results = await readBarcodes({ ...pixels, colorSpace: 'srgb' } as unknown as Parameters<typeof readBarcodes>[0], READER_OPTIONS);
  } else {
    throw new Error(`decodeQr: unsupported media type ${mediaType}`);
  }
  return results
    .filter((r) => r.isValid)
    .map((r) => ({ text: r.text, bytes: r.bytes, ecLevel: r.ecLevel, version: r.version, hasEci: r.hasECI }));
}

/** The text of every QR symbol found in a PNG or SVG image (empty when none decodes). */
export async function decodeQr(bytes: Uint8Array, mediaType: string): Promise<string[]> {
  return (await decodeQrSymbols(bytes, mediaType)).map((symbol) => symbol.text);
}
