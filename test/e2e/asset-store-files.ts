/**
 * What the asset end-to-end tests read straight from the filesystem artifact store and from
 * `kiln gc`: the object files (with inode and mtime, so a rewrite shows), the temp files a crash
 * leaves, and the garbage-collection report of `kiln gc --dry-run --grace 0 --json`.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { runKiln } from './kiln-process.ts';

/** One object file of the store. */
export interface ObjectFile {
  /** `sha256:<hex>` */
  ref: string;
  size: number;
  ino: number;
  mtimeMs: number;
}

/** `sha256:<hex>` of `bytes`: the ref the store gives them. */
export function sha256Ref(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** The content-addressed objects under `<root>/objects` (sidecars aside), sorted by ref. */
export async function listObjectFiles(root: string): Promise<ObjectFile[]> {
  const entries = await readdir(join(root, 'objects'), { recursive: true, withFileTypes: true }).catch(() => []);
  const files = entries.filter((e) => e.isFile() && /^[0-9a-f]{64}$/.test(e.name));
  const objects = await Promise.all(
    files.map(async (e) => {
      const s = await stat(join(e.parentPath, e.name));
      return { ref: `sha256:${e.name}`, size: s.size, ino: s.ino, mtimeMs: s.mtimeMs };
    }),
  );
  return objects.sort((a, b) => a.ref.localeCompare(b.ref));
}

/** Names of the files in `<root>/tmp` (writes in progress, or left by a crash). */
export async function listTempFiles(root: string): Promise<string[]> {
  return (await readdir(join(root, 'tmp')).catch(() => [])).sort();
}

/** The JSON report of `kiln gc --json` (see `ArtifactGcReport`). */
export interface GcReport {
  scanned: number;
  referenced: number;
  young: number;
  collected: { ref: string; size: number; modifiedAt: number }[];
  dryRun: boolean;
}

/**
 * Runs `kiln gc --dry-run --grace 0 --json <storeArgs>` in `dir` (which holds the kiln.yaml naming
 * the artifact root) and returns its report. With a zero grace period every unreferenced object is
 * listed, however recent.
 */
export async function gcDryRun(dir: string, storeArgs: readonly string[], env: NodeJS.ProcessEnv, configFile?: string): Promise<GcReport> {
  const args = ['gc', '--dry-run', '--grace', '0', '--json', ...storeArgs, ...(configFile ? ['--config', configFile] : [])];
  const result = await runKiln(args, dir, env, 30_000);
  assert.equal(result.code, 0, `kiln gc failed:\n${result.stdout}\n${result.stderr}`);
  const line = result.stdout.trim().split('\n').at(-1) ?? '';
  const report = JSON.parse(line) as GcReport;
  assert.equal(report.dryRun, true);
  return report;
}
