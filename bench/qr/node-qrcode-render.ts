/**
 * node-qrcode (`qrcode` 1.5.4, what most Node services call today) measured directly in this
 * process: `QRCode.toBuffer(url, { errorCorrectionLevel: 'M', width: 512 })` on distinct 60-character
 * URLs, awaited one at a time and with several calls in flight (its PNG path deflates through a
 * zlib stream, so overlapping calls can use libuv's thread pool). The QR bench compares kiln over
 * HTTP against the better of the two.
 */
import QRCode from 'qrcode';
import { benchUrl } from './raw-render.ts';

/** Untimed renders before each timed loop (JIT warm-up). */
const WARMUP_RENDERS = 50;

/** One timed loop of node-qrcode renders. */
export interface NodeQrcodeResult {
  /** Calls in flight at once (1 = sequential). */
  concurrency: number;
  renders: number;
  elapsedMs: number;
  rendersPerSecond: number;
  /** Size of the first PNG, bytes. */
  firstOutputBytes: number;
}

/** Both loops. */
export interface NodeQrcodeMeasurement {
  sequential: NodeQrcodeResult;
  concurrent: NodeQrcodeResult;
}

function renderPng(i: number): Promise<Buffer> {
  return QRCode.toBuffer(benchUrl(i), { errorCorrectionLevel: 'M', width: 512 });
}

/** Keeps `concurrency` renders in flight until `durationMs` have passed. */
async function timeLoop(concurrency: number, durationMs: number, firstIndex: number): Promise<NodeQrcodeResult> {
  for (let i = 0; i < WARMUP_RENDERS; i++) await renderPng(firstIndex + i);
  const firstOutputBytes = (await renderPng(firstIndex)).length;
  let next = firstIndex + WARMUP_RENDERS;
  let renders = 0;
  const started = performance.now();
  const deadline = started + durationMs;
  const lane = async (): Promise<void> => {
    while (performance.now() < deadline) {
      await renderPng(next++);
      renders++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  const elapsedMs = performance.now() - started;
  return { concurrency, renders, elapsedMs, rendersPerSecond: (renders * 1000) / elapsedMs, firstOutputBytes };
}

/** Measures node-qrcode PNG renders for `durationMs` sequentially, then `durationMs` with `concurrency` in flight. */
export async function measureNodeQrcode(durationMs: number, concurrency: number): Promise<NodeQrcodeMeasurement> {
  const sequential = await timeLoop(1, durationMs, 0);
  // Fresh URLs for the second loop, so neither loop renders content the other already did.
  const concurrent = await timeLoop(concurrency, durationMs, 10_000_000);
  return { sequential, concurrent };
}

