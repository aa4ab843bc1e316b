/**
 * `npm run bench -- qr`: kiln's QR service against its own renderer and against the usual
 * alternatives, in one run (issue 4):
 *   (a) raw in-process renders/s of kiln's renderer and of node-qrcode, vs uncached renders/s
 *       through a real `kiln serve` over HTTP;
 *   (b) cached `GET /v1/qr/:hash` requests/s vs a fastify hello-world in its own process.
 * In-process loops run first, while no server competes for the CPU. Each phase that fails is
 * recorded as failed and the others still run; every child is stopped by PID whatever happens.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { CpuProfileSummary } from '../engine-pg/cpu-profile.ts';
import { describeMachine } from '../engine/machine-info.ts';
import { readProcessRssBytes, startRssSampler } from '../engine/rss-sampler.ts';
import { startFastifyHello } from './fastify-hello-server.ts';
import { loadGet, loadUncachedRenders, type LoadResult, type LoadSettings } from './http-load.ts';
import { startKilnServe, startServeProfile, stopServeProfile, type KilnServe } from './kiln-serve.ts';
import { measureNodeQrcode } from './node-qrcode-render.ts';
import type { QrArgs } from './qr-args.ts';
import {
  computeRatios,
  formatLoadDetails,
  formatMeasurements,
  formatProfiles,
  formatRatios,
  formatSettings,
  isFailed,
  type PhaseOutcome,
  type QrReport,
  type UncachedResult,
} from './qr-report.ts';
import { benchUrl, formatRawRenders, measureRawRenders } from './raw-render.ts';
import { startServeUsage } from './serve-usage.ts';
import { startWalSampler } from './wal-pages.ts';

const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const PROFILE_DIR = fileURLToPath(new URL('../results/profiles/', import.meta.url));
/** Each raw kind (png, svg, matrix) and each node-qrcode loop, ms. */
const RAW_MS = 3_000;
const NODE_QRCODE_MS = 4_000;
/** Content index ranges, so warm-up, measurement and the cached image never share a content. */
const WARMUP_FIRST_INDEX = 0;
const MEASURED_FIRST_INDEX = 100_000_000;
const CACHED_INDEX = 900_000_000;

/** Runs `phase`, turning a throw into a failed outcome (logged) so the other phases still run. */
async function attempt<T extends object>(name: string, phase: () => Promise<T>): Promise<PhaseOutcome<T>> {
  try {
    return await phase();
  } catch (err) {
    const message = (err as Error).message;
    console.error(`${name}: failed: ${message}`);
    return { failed: message.split('\n')[0] ?? message };
  }
}

/** Renders the cached phase's image once through the server; returns its content hash (the ETag). */
async function renderCachedImage(baseUrl: string): Promise<string> {
  const res = await fetch(`${baseUrl}/v1/qr`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ content: benchUrl(CACHED_INDEX), format: 'png', ecc: 'M', size: 512 }),
  });
  await res.arrayBuffer();
  const hash = /^"([0-9a-f]{64})"$/.exec(res.headers.get('etag') ?? '')?.[1];
  if (res.status !== 200 || hash === undefined) throw new Error(`POST /v1/qr answered ${res.status} (etag ${res.headers.get('etag')}), not 200 with a hash`);
  return hash;
}

type CpuProfiles = NonNullable<QrReport['cpuProfiles']>;

/** Runs `measure` with the server's profiler on when `profileDir` is set; returns the summary too. */
async function profiled<T>(serve: KilnServe, profileDir: string | undefined, measure: () => Promise<T>): Promise<{ result: T; profile?: CpuProfileSummary }> {
  if (!profileDir) return { result: await measure() };
  startServeProfile(serve);
  let result: T;
  try {
    result = await measure();
  } catch (err) {
    // Stopped anyway, so the next phase's SIGUSR2 starts a profile instead of stopping this one.
    await stopServeProfile(serve, profileDir).catch(() => undefined);
    throw err;
  }
  return { result, profile: await stopServeProfile(serve, profileDir) };
}

/** Uncached phase: warm-up, then the measured load (alone profiled), with the server's RSS, spend and WAL pages. */
async function measureUncached(serve: KilnServe, load: LoadSettings, warmupS: number, profileDir: string | undefined): Promise<{ result: UncachedResult; profile?: CpuProfileSummary }> {
  await loadUncachedRenders(serve.baseUrl, { ...load, durationS: warmupS }, WARMUP_FIRST_INDEX);
  const rss = startRssSampler(100, () => readProcessRssBytes(serve.server.pid));
  const usage = startServeUsage(serve.server.pid);
  const wal = startWalSampler(serve.dbPath);
  const { result, profile } = await profiled(serve, profileDir, () => loadUncachedRenders(serve.baseUrl, load, MEASURED_FIRST_INDEX));
  const walPages = wal.stop();
  return {
    result: { ...result, serverPeakRssMb: rss.stop(), server: usage.stop(result.countedResponses), ...(walPages ? { walPages } : {}) },
    ...(profile ? { profile } : {}),
  };
}

type KilnPhases = Pick<QrReport, 'kilnUncached' | 'kilnCached' | 'cpuProfiles'>;

/** The measured kiln phases on a running server (profiled with `--cpu-prof`). */
async function measureKiln(serve: KilnServe, load: LoadSettings, args: QrArgs, profileDir: string | undefined): Promise<KilnPhases> {
  const cpuProfiles: CpuProfiles = {};
  const kilnUncached = await attempt('kiln HTTP uncached', async () => {
    const { result, profile } = await measureUncached(serve, load, args.warmupS, profileDir);
    if (profile) cpuProfiles.uncached = profile;
    return result;
  });
  if (!isFailed(kilnUncached)) console.log(`kiln HTTP uncached: ${kilnUncached.perSecond.toFixed(1)} renders/s`);
  const kilnCached = await attempt('kiln HTTP cached', async () => {
    const hash = await renderCachedImage(serve.baseUrl);
    const url = `${serve.baseUrl}/v1/qr/${hash}`;
    await loadGet(url, { ...load, durationS: args.warmupS });
    const usage = startServeUsage(serve.server.pid);
    const { result, profile } = await profiled(serve, profileDir, () => loadGet(url, load));
    if (profile) cpuProfiles.cached = profile;
    return { ...result, hash, server: usage.stop(result.countedResponses) };
  });
  if (!isFailed(kilnCached)) console.log(`kiln HTTP cached: ${kilnCached.perSecond.toFixed(1)} requests/s`);
  return { kilnUncached, kilnCached, ...(profileDir ? { cpuProfiles } : {}) };
}

/** Both kiln phases on one `kiln serve`, stopped (by PID) and its temp dir removed afterwards. */
async function runKilnPhases(args: QrArgs, load: LoadSettings, stamp: string): Promise<KilnPhases> {
  const profileDir = args.cpuProf ? `${PROFILE_DIR}qr-${stamp}` : undefined;
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  let serve: KilnServe;
  try {
    serve = await startKilnServe({ logLevel: args.logLevel, ...(profileDir ? { cpuProfDir: profileDir } : {}) });
  } catch (err) {
    const failed = `kiln serve did not start: ${(err as Error).message.split('\n')[0]}`;
    console.error(`${failed}\n${(err as Error).message}`);
    return { kilnUncached: { failed }, kilnCached: { failed } };
  }
  try {
    console.log(`kiln serve: pid ${serve.server.pid} at ${serve.baseUrl}, store in ${serve.dir}`);
    return await measureKiln(serve, load, args, profileDir);
  } finally {
    await serve.close();
  }
}

/** The fastify hello-world phase, its server stopped (by PID) afterwards. */
async function runFastifyPhase(args: QrArgs, load: LoadSettings): Promise<PhaseOutcome<LoadResult>> {
  return attempt('fastify hello-world', async () => {
    const hello = await startFastifyHello();
    try {
      console.log(`fastify hello-world: pid ${hello.server.pid} at ${hello.url}`);
      await loadGet(hello.url, { ...load, durationS: args.warmupS });
      const result = await loadGet(hello.url, load);
      console.log(`fastify hello-world: ${result.perSecond.toFixed(1)} requests/s`);
      return result;
    } finally {
      await hello.close();
    }
  });
}

/** Runs every phase, prints the results and writes the JSON report. */
export async function runQrSuite(args: QrArgs): Promise<{ report: QrReport; path: string }> {
  const startedAt = new Date().toISOString();
  // Colons are not portable in file names, so the ISO timestamp uses '-' there.
  const stamp = startedAt.replace(/[:.]/g, '-');
  const load: LoadSettings = { connections: args.connections, durationS: args.durationS };
  const head: Pick<QrReport, 'machine' | 'settings' | 'loadAvg1mAtStart'> = {
    machine: describeMachine(),
    loadAvg1mAtStart: Math.round((loadavg()[0] ?? 0) * 100) / 100,
    settings: {
      connections: args.connections,
      durationS: args.durationS,
      warmupS: args.warmupS,
      rawMs: RAW_MS,
      nodeQrcodeMs: NODE_QRCODE_MS,
      render: { urlChars: 60, ecc: 'M', sizePx: 512, format: 'png' },
      kilnServe: { store: 'sqlite (default, temp dir)', logLevel: args.logLevel, worker: 'embedded' },
      driver: 'autocannon 9 in the suite process (uncached: requests[].setupRequest gives each request its own body)',
    },
  };
  console.log(`qr bench\n${formatSettings(head)}\n`);
  const raw = await attempt('raw kiln renderer', async () => measureRawRenders(RAW_MS));
  if (!isFailed(raw)) console.log(`${formatRawRenders(raw)}\n`);
  const nodeQrcode = await attempt('node-qrcode', () => measureNodeQrcode(NODE_QRCODE_MS, args.connections));
  if (!isFailed(nodeQrcode)) console.log(`node-qrcode: ${nodeQrcode.sequential.rendersPerSecond.toFixed(1)} renders/s sequential, ${nodeQrcode.concurrent.rendersPerSecond.toFixed(1)} with ${args.connections} in flight`);
  const kiln = await runKilnPhases(args, load, stamp);
  const fastifyHello = await runFastifyPhase(args, load);
  const partial = { suite: 'qr' as const, startedAt, ...head, raw, nodeQrcode, ...kiln, fastifyHello };
  const report: QrReport = { ...partial, ratios: computeRatios(partial) };
  console.log(`\n${formatMeasurements(report)}\n\n${formatLoadDetails(report)}\n\n${formatRatios(report)}\n`);
  const profile = formatProfiles(report);
  if (profile) console.log(`${profile}\n`);
  mkdirSync(RESULTS_DIR, { recursive: true });
  const path = `${RESULTS_DIR}qr-${stamp}.json`;
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`wrote ${path}`);
  return { report, path };
}
