/**
 * Raw QR render throughput in this process, without kiln around it: how many distinct 60-character
 * URLs per second `parseQrRequest` + `renderQr` turn into PNG (and into SVG) at ecc M, size 512,
 * plus the bare `qr` module matrix for reference. The QR bench compares kiln end to end against
 * these numbers. Standalone: `node --import tsx bench/qr/raw-render.ts [durationMs]`.
 */
import { pathToFileURL } from 'node:url';
import { encodeQrMatrix } from '../../src/pipelines/qr-code/matrix.ts';
import { parseQrRequest } from '../../src/pipelines/qr-code/options.ts';
import { renderQr } from '../../src/pipelines/qr-code/render.ts';
import { formatTextTable } from '../engine/text-table.ts';

/** Length of every benchmark URL, characters (all ASCII, so also bytes). */
export const BENCH_URL_CHARS = 60;
/** Untimed iterations before each timed loop (JIT warm-up). */
const WARMUP_RENDERS = 200;

/** What was measured. */
export const RawRenderKind = { png: 'png', svg: 'svg', matrix: 'matrix' } as const;
/** One of {@link RawRenderKind}'s values. */
export type RawRenderKind = (typeof RawRenderKind)[keyof typeof RawRenderKind];

/** One timed loop. */
export interface RawRenderResult {
  kind: RawRenderKind;
  renders: number;
  elapsedMs: number;
  rendersPerSecond: number;
  /** Output size of the first render, bytes (0 for the matrix). */
  firstOutputBytes: number;
}

/** The three loops of one measurement. */
export interface RawRenderMeasurement {
  png: RawRenderResult;
  svg: RawRenderResult;
  matrix: RawRenderResult;
}

/** The `i`-th benchmark URL: distinct per `i`, exactly {@link BENCH_URL_CHARS} characters. */
export function benchUrl(i: number): string {
  const prefix = 'https://example.com/products/item?ref=qr-bench&id=';
  return prefix + String(i).padStart(BENCH_URL_CHARS - prefix.length, '0');
}

/** Runs `renderOne(i)` for i = 0, 1, ... until `durationMs` have passed; returns the count and time. */
function timeLoop(kind: RawRenderKind, durationMs: number, renderOne: (i: number) => number): RawRenderResult {
  for (let i = 0; i < WARMUP_RENDERS; i++) renderOne(i);
  const firstOutputBytes = renderOne(0);
  const started = performance.now();
  let renders = 0;
  let elapsedMs = 0;
  // Check the clock every 16 renders: cheap, and a render is far shorter than the duration.
  while (elapsedMs < durationMs) {
    for (let k = 0; k < 16; k++) renderOne(WARMUP_RENDERS + renders++);
    elapsedMs = performance.now() - started;
  }
  return { kind, renders, elapsedMs, rendersPerSecond: (renders * 1000) / elapsedMs, firstOutputBytes };
}

/**
 * Measures PNG, SVG and bare-matrix renders for `durationMs` each, one after the other, on this
 * thread (one core). Each render parses its request too, as every real path does.
 */
export function measureRawRenders(durationMs: number): RawRenderMeasurement {
  const render = (format: 'png' | 'svg') => (i: number): number =>
    renderQr(parseQrRequest({ content: benchUrl(i), format, ecc: 'M', size: 512 }, 'json')).bytes.length;
  return {
    png: timeLoop(RawRenderKind.png, durationMs, render('png')),
    svg: timeLoop(RawRenderKind.svg, durationMs, render('svg')),
    matrix: timeLoop(RawRenderKind.matrix, durationMs, (i) => (encodeQrMatrix(benchUrl(i), 'M'), 0)),
  };
}

/** A printable table of a measurement. */
export function formatRawRenders(measurement: RawRenderMeasurement): string {
  const rows = [measurement.png, measurement.svg, measurement.matrix].map((r) => [
    r.kind,
    String(r.renders),
    r.elapsedMs.toFixed(0),
    r.rendersPerSecond.toFixed(0),
    String(r.firstOutputBytes),
  ]);
  return formatTextTable(['raw render (60-char URL, ecc M, 512 px)', 'renders', 'ms', 'renders/s', 'bytes'], rows);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const durationMs = Number(process.argv[2] ?? 3000);
  console.log(formatRawRenders(measureRawRenders(durationMs)));
}
