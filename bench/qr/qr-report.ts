/**
 * The QR bench's report: the JSON written to `bench/results/qr-<timestamp>.json`, its ratios and
 * targets (issue 4), and the text printed for it.
 */
import type { LogLevel } from '../../src/config/schema.ts';
import type { CpuProfileSummary } from '../engine-pg/cpu-profile.ts';
import { formatHotspots } from '../engine-pg/pg-report-format.ts';
import type { MachineInfo } from '../engine/machine-info.ts';
import { formatTextTable } from '../engine/text-table.ts';
import type { LoadResult } from './http-load.ts';
import type { NodeQrcodeMeasurement, NodeQrcodeResult } from './node-qrcode-render.ts';
import { BENCH_URL_CHARS, type RawRenderMeasurement } from './raw-render.ts';
import type { ServeUsage } from './serve-usage.ts';
import type { WalPages } from './wal-pages.ts';

/** A phase that produced no numbers, and why. */
export interface FailedPhase {
  failed: string;
}

/** A phase's result, or why it has none. */
export type PhaseOutcome<T> = T | FailedPhase;

/** The three ratios issue 4 sets targets for. */
export interface QrRatios {
  /** Uncached kiln-over-HTTP renders/s / raw in-process PNG renders/s. Target >= 0.5. */
  kilnHttpOverRaw?: number;
  /** Uncached kiln-over-HTTP renders/s / node-qrcode PNG renders/s (the better of its two loops). Target > 1. */
  kilnHttpOverNodeQrcode?: number;
  /** Cached `GET /v1/qr/:hash` requests/s / fastify hello-world requests/s. Target >= 0.5. */
  cachedOverFastifyHello?: number;
}

/** The JSON report. */
export interface QrReport {
  suite: 'qr';
  startedAt: string;
  machine: MachineInfo;
  /** 1-minute load average when the suite started: on a shared host, other work skews every number. */
  loadAvg1mAtStart: number;
  settings: {
    connections: number;
    durationS: number;
    warmupS: number;
    /** In-process loops: each raw kind and each node-qrcode loop, ms. */
    rawMs: number;
    nodeQrcodeMs: number;
    /** What every render is. */
    render: { urlChars: number; ecc: 'M'; sizePx: number; format: 'png' };
    kilnServe: { store: 'sqlite (default, temp dir)'; logLevel: LogLevel; worker: 'embedded' };
    driver: string;
  };
  raw: PhaseOutcome<RawRenderMeasurement>;
  nodeQrcode: PhaseOutcome<NodeQrcodeMeasurement>;
  /** `server`: the kiln serve child's CPU and storage writes per counted response (serve-usage.ts). */
  kilnUncached: PhaseOutcome<UncachedResult>;
  kilnCached: PhaseOutcome<LoadResult & { hash: string; server: ServeUsage }>;
  fastifyHello: PhaseOutcome<LoadResult>;
  ratios: QrRatios;
  /** `--cpu-prof`: the kiln serve child during each measured kiln phase. */
  cpuProfiles?: { uncached?: CpuProfileSummary; cached?: CpuProfileSummary };
}

/** The uncached phase: the load, the server's spend, and where its store's writes landed (wal-pages.ts). */
export type UncachedResult = LoadResult & { serverPeakRssMb: number; server: ServeUsage; walPages?: WalPages };

/** Targets of issue 4: `min` is inclusive, `above` exclusive. */
export const QR_TARGETS = {
  kilnHttpOverRaw: { min: 0.5 },
  kilnHttpOverNodeQrcode: { above: 1 },
  cachedOverFastifyHello: { min: 0.5 },
} as const;

/** True when a phase outcome is a failure. */
export function isFailed<T extends object>(outcome: PhaseOutcome<T>): outcome is FailedPhase {
  return 'failed' in outcome;
}

/** The better node-qrcode loop (the one kiln is compared against). */
export function bestNodeQrcode(measurement: NodeQrcodeMeasurement): NodeQrcodeResult {
  return measurement.concurrent.rendersPerSecond > measurement.sequential.rendersPerSecond ? measurement.concurrent : measurement.sequential;
}

function divide(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined || b === 0 ? undefined : Math.round((a / b) * 1000) / 1000;
}

function ok<T extends object>(outcome: PhaseOutcome<T>): T | undefined {
  return isFailed(outcome) ? undefined : outcome;
}

/** The ratios of whatever phases succeeded. */
export function computeRatios(report: Omit<QrReport, 'ratios'>): QrRatios {
  const kilnHttp = ok(report.kilnUncached)?.perSecond;
  const nodeQrcode = ok(report.nodeQrcode);
  return {
    kilnHttpOverRaw: divide(kilnHttp, ok(report.raw)?.png.rendersPerSecond),
    kilnHttpOverNodeQrcode: divide(kilnHttp, nodeQrcode ? bestNodeQrcode(nodeQrcode).rendersPerSecond : undefined),
    cachedOverFastifyHello: divide(ok(report.kilnCached)?.perSecond, ok(report.fastifyHello)?.perSecond),
  };
}

function loadRow(name: string, what: string, outcome: PhaseOutcome<LoadResult>): string[] {
  if (isFailed(outcome)) return [name, `FAILED: ${outcome.failed}`];
  const l = outcome;
  const settings = `${l.connections} conn, ${l.durationS} s`;
  return [name, `${what}; ${settings}`, String(l.countedResponses), l.elapsedS.toFixed(2), l.perSecond.toFixed(1), String(l.latency.p50Ms), String(l.latency.p99Ms)];
}

function inProcessRows(report: QrReport): string[][] {
  const rows: string[][] = [];
  const raw = report.raw;
  if (isFailed(raw)) rows.push(['raw kiln renderer', `FAILED: ${raw.failed}`]);
  else {
    const what = 'in-process, 1 thread, parseQrRequest + renderQr';
    for (const r of [raw.png, raw.svg, raw.matrix]) rows.push([`raw kiln ${r.kind}`, what, String(r.renders), (r.elapsedMs / 1000).toFixed(2), r.rendersPerSecond.toFixed(1), '', '']);
  }
  const nq = report.nodeQrcode;
  if (isFailed(nq)) rows.push(['node-qrcode png', `FAILED: ${nq.failed}`]);
  else {
    for (const r of [nq.sequential, nq.concurrent]) {
      const what = `in-process, ${r.concurrency === 1 ? 'sequential (awaited one by one)' : `${r.concurrency} calls in flight`}`;
      rows.push(['node-qrcode png', what, String(r.renders), (r.elapsedMs / 1000).toFixed(2), r.rendersPerSecond.toFixed(1), '', '']);
    }
  }
  return rows;
}

/** Every measurement, one row each, with its settings. */
export function formatMeasurements(report: QrReport): string {
  const header = ['measurement', 'settings', 'count', 's', 'per s', 'p50 ms', 'p99 ms'];
  const rows = [
    ...inProcessRows(report),
    loadRow('kiln HTTP uncached', 'POST /v1/qr distinct content, default wait; counts 200 + PNG', report.kilnUncached),
    loadRow('kiln HTTP cached', 'GET /v1/qr/:hash (one hash, rendered before); counts 2xx', report.kilnCached),
    loadRow('fastify hello-world', 'GET / -> {"hello":"world"}, own process; counts 2xx', report.fastifyHello),
  ];
  return formatTextTable(header, rows, ['left', 'left', 'right', 'right', 'right', 'right', 'right']);
}

function targetText(value: number, target: { min?: number; above?: number }): string {
  const met = target.min !== undefined ? value >= target.min : value > (target.above ?? 0);
  const wanted = target.min !== undefined ? `>= ${target.min}` : `> ${target.above}`;
  return `target ${wanted}: ${met ? 'target met' : 'NOT met'}`;
}

const RATIO_LABEL_WIDTH = 56;

/** The three ratio lines (a missing ratio says which phase failed). */
export function formatRatios(report: QrReport): string {
  const line = (label: string, value: number | undefined, target: { min?: number; above?: number }): string =>
    `${`${label}:`.padEnd(RATIO_LABEL_WIDTH)} ${value === undefined ? 'n/a (a phase failed)' : `${value.toFixed(3)}  (${targetText(value, target)})`}`;
  return [
    line('(a) kiln HTTP uncached / raw kiln png', report.ratios.kilnHttpOverRaw, QR_TARGETS.kilnHttpOverRaw),
    line('(a) kiln HTTP uncached / node-qrcode (best loop)', report.ratios.kilnHttpOverNodeQrcode, QR_TARGETS.kilnHttpOverNodeQrcode),
    line('(b) kiln cached GET /v1/qr/:hash / fastify hello-world', report.ratios.cachedOverFastifyHello, QR_TARGETS.cachedOverFastifyHello),
  ].join('\n');
}

/** Responses that did not count, errors and the server's RSS: what explains a low number. */
export function formatLoadDetails(report: QrReport): string {
  const lines: string[] = [];
  const describe = (name: string, outcome: PhaseOutcome<LoadResult>): void => {
    if (isFailed(outcome)) return;
    const statuses = Object.entries(outcome.statusCounts).map(([s, n]) => `${s}: ${n}`).join(', ');
    lines.push(`${name}: statuses {${statuses}}, bad bodies ${outcome.badBodies}, errors ${outcome.errors} (timeouts ${outcome.timeouts}), max latency ${outcome.latency.maxMs} ms`);
  };
  const spend = (phase: string, server: ServeUsage): string =>
    `kiln serve per counted response in the ${phase} phase: CPU ${server.cpuUsPerRequest} µs, storage writes ${server.diskWriteKbPerRequest} KB`;
  describe('kiln HTTP uncached', report.kilnUncached);
  if (!isFailed(report.kilnUncached)) {
    lines.push(`kiln serve peak RSS during the uncached phase: ${report.kilnUncached.serverPeakRssMb} MB`);
    lines.push(spend('uncached', report.kilnUncached.server));
    const wal = report.kilnUncached.walPages;
    if (wal) {
      const owners = wal.byOwner.map((o) => `${o.owner} ${o.perCommit}`).join(', ');
      const perResponse = (wal.commits / Math.max(1, report.kilnUncached.countedResponses)).toFixed(2);
      lines.push(`its SQLite WAL in that phase: ${wal.framesPerCommit} pages of ${wal.pageSize} B per commit (${wal.commits} commits, ${perResponse} per counted response); per commit by table or index: ${owners}`);
    }
  }
  describe('kiln HTTP cached', report.kilnCached);
  if (!isFailed(report.kilnCached)) lines.push(spend('cached', report.kilnCached.server));
  describe('fastify hello-world', report.fastifyHello);
  return lines.join('\n');
}

/** The settings header printed before the first phase. */
export function formatSettings(report: Pick<QrReport, 'machine' | 'settings' | 'loadAvg1mAtStart'>): string {
  const { machine: m, settings: s } = report;
  return [
    `machine: ${m.cpus} x ${m.cpuModel}, ${m.totalMemMb} MB, node ${m.node} (${m.platform}); load average (1 min) at start ${report.loadAvg1mAtStart.toFixed(2)}`,
    `render: ${s.render.format}, ${BENCH_URL_CHARS}-char URL, ecc ${s.render.ecc}, ${s.render.sizePx} px; every measured render has distinct content`,
    `in-process: raw ${s.rawMs} ms per kind, node-qrcode ${s.nodeQrcodeMs} ms per loop`,
    `HTTP: ${s.driver}, ${s.connections} connections, ${s.warmupS} s warm-up + ${s.durationS} s measured per phase, 127.0.0.1`,
    `kiln serve: own process, store ${s.kilnServe.store}, ${s.kilnServe.worker} worker, --log-level ${s.kilnServe.logLevel}`,
  ].join('\n');
}

/** The CPU profile sections, when there are any. */
export function formatProfiles(report: QrReport): string | undefined {
  const { uncached, cached } = report.cpuProfiles ?? {};
  const sections = [
    uncached ? formatHotspots('kiln serve, measured uncached phase', uncached) : undefined,
    cached ? formatHotspots('kiln serve, measured cached phase', cached) : undefined,
  ].filter((s): s is string => s !== undefined);
  return sections.length > 0 ? sections.join('\n\n') : undefined;
}
