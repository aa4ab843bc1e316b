/**
 * CPU profile of one measured phase, taken in-process with V8's sampling profiler (the one
 * `node --cpu-prof` uses) through `node:inspector`. In-process because tsx compiles each `.ts`
 * file onto a handful of generated lines, so a `--cpu-prof` file's positions only mean something
 * with the source maps this process holds (`findSourceMap`); it also lets the profile cover the
 * measured phase only, not startup and warm-up. The raw profile is written too (open it in
 * Chrome DevTools); its positions are the generated ones.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { findSourceMap } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One function's self time. */
export interface CpuHotspot {
  functionName: string;
  /** `path:line` of the function's definition (source line for `.ts` files), repo-relative. */
  location: string;
  selfMs: number;
  selfPct: number;
}

/** Self time summed over a file or an area (a `src/` folder, an npm package, node internals). */
export interface CpuShare {
  name: string;
  selfMs: number;
  selfPct: number;
}

/** What {@link CpuProfiler.stop} returns. */
export interface CpuProfileSummary {
  totalMs: number;
  /** Top functions by self time. */
  hotspots: CpuHotspot[];
  byArea: CpuShare[];
  byFile: CpuShare[];
  /** Where the raw `.cpuprofile` was written. */
  profilePath: string;
}

/** A running profile. */
export interface CpuProfiler {
  /** Stops, writes `<dir>/<label>.cpuprofile` and summarises the top `top` functions. */
  stop(dir: string, label: string, top?: number): Promise<CpuProfileSummary>;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples?: number[];
  timeDeltas?: number[];
}

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** V8's default is 1 ms; stated so the two ways of profiling agree. */
const SAMPLING_INTERVAL_US = 1000;

/** Starts sampling this process. */
export async function startCpuProfile(): Promise<CpuProfiler> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_US });
  await session.post('Profiler.start');
  return {
    async stop(dir, label, top = 20) {
      const { profile } = (await session.post('Profiler.stop')) as { profile: Profile };
      session.disconnect();
      mkdirSync(dir, { recursive: true });
      const profilePath = join(dir, `${label}.cpuprofile`);
      writeFileSync(profilePath, JSON.stringify(profile));
      return { ...summarize(profile, top), profilePath: relative(REPO_ROOT, profilePath) };
    },
  };
}

/** Repo-relative path of a script URL; internals and pseudo-frames keep their names. */
function displayPath(url: string): string {
  if (!url.startsWith('file://')) return url;
  return relative(REPO_ROOT, fileURLToPath(url));
}

/** `path:line` (1-based) of a frame, through the module's source map when it has one. */
function locate(frame: ProfileNode['callFrame']): string {
  if (!frame.url) return frame.functionName;
  const entry: unknown = frame.url.startsWith('file://') ? findSourceMap(fileURLToPath(frame.url))?.findEntry(frame.lineNumber, frame.columnNumber) : undefined;
  // findEntry returns {} when the position has no mapping.
  const original = typeof entry === 'object' && entry !== null && 'originalLine' in entry && typeof entry.originalLine === 'number' ? entry.originalLine : undefined;
  const line = (original ?? frame.lineNumber) + 1;
  return `${displayPath(frame.url)}:${line}`;
}

/** The coarse bucket of a frame: GC/idle/program, node internals, an npm package, or a src folder. */
function areaOf(frame: ProfileNode['callFrame']): string {
  if (!frame.url) return frame.functionName || '(unknown)';
  if (!frame.url.startsWith('file://')) return 'node internals';
  const path = displayPath(frame.url);
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg?.[1]) return `node_modules/${pkg[1]}`;
  const parts = path.split('/');
  return parts.slice(0, parts[0] === 'src' && parts[1] === 'stores' ? 3 : 2).join('/');
}

function selfTimeByNode(profile: Profile): Map<number, number> {
  const byNode = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  // timeDeltas[i] is the time since the previous sample, charged to the sample it precedes.
  samples.forEach((id, i) => byNode.set(id, (byNode.get(id) ?? 0) + (deltas[i] ?? 0) / 1000));
  return byNode;
}

function topShares(totals: Map<string, number>, totalMs: number, top: number): CpuShare[] {
  return [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, ms]) => ({ name, selfMs: Math.round(ms), selfPct: Math.round((ms / totalMs) * 1000) / 10 }));
}

function summarize(profile: Profile, top: number): Omit<CpuProfileSummary, 'profilePath'> {
  const selfMs = selfTimeByNode(profile);
  const functions = new Map<string, { functionName: string; location: string; ms: number }>();
  const files = new Map<string, number>();
  const areas = new Map<string, number>();
  let totalMs = 0;
  for (const node of profile.nodes) {
    const ms = selfMs.get(node.id) ?? 0;
    if (ms === 0) continue;
    totalMs += ms;
    const location = locate(node.callFrame);
    const name = node.callFrame.functionName || '(anonymous)';
    const key = `${name}@${location}`;
    const entry = functions.get(key) ?? { functionName: name, location, ms: 0 };
    entry.ms += ms;
    functions.set(key, entry);
    const file = node.callFrame.url ? displayPath(node.callFrame.url) : name;
    files.set(file, (files.get(file) ?? 0) + ms);
    const area = areaOf(node.callFrame);
    areas.set(area, (areas.get(area) ?? 0) + ms);
  }
  const hotspots = [...functions.values()]
    .sort((a, b) => b.ms - a.ms)
    .slice(0, top)
    .map((f) => ({ functionName: f.functionName, location: f.location, selfMs: Math.round(f.ms), selfPct: Math.round((f.ms / totalMs) * 1000) / 10 }));
  return { totalMs: Math.round(totalMs), hotspots, byArea: topShares(areas, totalMs, 12), byFile: topShares(files, totalMs, 12) };
}
