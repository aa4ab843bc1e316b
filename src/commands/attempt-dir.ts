/**
 * The working directory of one attempt of a command: `<workDir>/<run id>/<stage>.<kind>.<attempt>.<nonce>/`
 * holding `input.json` (KILN_INPUT), `in/<stage>/<file>` (the artifacts of earlier stages, as
 * files) and `out/` (KILN_OUTPUT_DIR, whose files become this stage's artifacts). It is removed
 * when the attempt ends; an attempt that died with its worker leaves its directory behind, which
 * the next attempt of the same stage removes.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readdir, rm, rmdir, writeFile } from 'node:fs/promises';
import { dirname, extname, join, relative, sep } from 'node:path';
import { NotFoundError, StageFailure } from '../core/errors.ts';
import type { JsonValue } from '../core/model.ts';
import type { ArtifactStore } from '../core/ports/artifact-store.ts';

/** A file a command stage left in its output dir, stored content-addressed. */
export interface StageArtifact {
  ref: string;
  size: number;
  mediaType: string;
}

/** A command stage's output (its stage record's `output`). */
export interface CommandStageOutput {
  /** `::output key=value` lines, in order (a later line with the same key wins). */
  outputs: Record<string, string>;
  /** Files of the output dir by path relative to it (`/`-separated). */
  artifacts: Record<string, StageArtifact>;
}

/** An artifact of an earlier stage as the next command sees it. */
export interface InputArtifact extends StageArtifact {
  /** Absolute path of the file in this attempt's `in/` folder. */
  path: string;
}

/** The paths of one attempt. */
export interface AttemptDir {
  root: string;
  outputDir: string;
  inputDir: string;
  inputFile: string;
}

const MEDIA_TYPES: Readonly<Record<string, string>> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
  '.avif': 'image/avif',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.html': 'text/html',
  '.pdf': 'application/pdf',
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The output of a command stage, or null for anything else (e.g. a stage that has not run). */
export function commandOutputOf(value: JsonValue | undefined): CommandStageOutput | null {
  if (!isObject(value) || !isObject(value['outputs']) || !isObject(value['artifacts'])) return null;
  return value as unknown as CommandStageOutput;
}

/** A safe relative file name: no absolute path, no `..` or empty segment. */
function isSafeName(name: string): boolean {
  return name !== '' && !name.startsWith('/') && name.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

/**
 * Creates this attempt's directory (and removes those of earlier attempts of the same stage and
 * kind of the run: their workers are gone or their leases lost, so nothing may use them).
 */
export async function openAttemptDir(workDir: string, runId: string, stage: string, kind: string, attempt: number): Promise<AttemptDir> {
  const runDir = join(workDir, runId);
  await mkdir(runDir, { recursive: true });
  const prefix = `${stage}.${kind}.`;
  for (const entry of await readdir(runDir)) {
    const earlier = Number(entry.slice(prefix.length).split('.')[0]);
    if (entry.startsWith(prefix) && Number.isInteger(earlier) && earlier < attempt) await rm(join(runDir, entry), { recursive: true, force: true });
  }
  const root = join(runDir, `${prefix}${attempt}.${randomBytes(4).toString('hex')}`);
  const dir = { root, outputDir: join(root, 'out'), inputDir: join(root, 'in'), inputFile: join(root, 'input.json') };
  await mkdir(dir.outputDir, { recursive: true });
  await mkdir(dir.inputDir, { recursive: true });
  return dir;
}

/** Removes the attempt's directory, and the run's folder once empty. */
export async function closeAttemptDir(dir: AttemptDir): Promise<void> {
  await rm(dir.root, { recursive: true, force: true });
  await rmdir(dirname(dir.root)).catch(() => undefined);
}

/** Writes the artifacts of earlier stages under `in/<stage>/` and returns where each went. */
export async function materializeInputs(
  artifacts: ArtifactStore,
  dir: AttemptDir,
  outputs: Readonly<Record<string, JsonValue>>,
): Promise<Record<string, Record<string, InputArtifact>>> {
  const placed: Record<string, Record<string, InputArtifact>> = {};
  for (const [stage, value] of Object.entries(outputs)) {
    const output = commandOutputOf(value);
    if (!output) continue;
    const files: Record<string, InputArtifact> = {};
    for (const [name, artifact] of Object.entries(output.artifacts)) {
      if (!isSafeName(name)) continue;
      const path = join(dir.inputDir, stage, ...name.split('/'));
      await mkdir(dirname(path), { recursive: true });
      const bytes = await artifacts.get(artifact.ref).catch((err: unknown) => {
        if (err instanceof NotFoundError) throw StageFailure.retryable(`artifact ${name} of stage ${stage} (${artifact.ref}) is missing from the artifact store`, { cause: err });
        throw err;
      });
      await writeFile(path, bytes);
      files[name] = { ...artifact, path };
    }
    placed[stage] = files;
  }
  return placed;
}

/** Every regular file under `root`, as `/`-separated paths relative to it, sorted. */
async function listFiles(root: string, dir = root): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await listFiles(root, path)));
    // Symlinks and other special files are not the command's output: only what it wrote.
    else if (entry.isFile()) found.push(relative(root, path).split(sep).join('/'));
  }
  return found.sort();
}

/** Stores every file the command left in `out/` (content-addressed) and returns them by name. */
export async function collectOutputs(artifacts: ArtifactStore, dir: AttemptDir): Promise<Record<string, StageArtifact>> {
  const stored: Record<string, StageArtifact> = {};
  for (const name of await listFiles(dir.outputDir)) {
    const path = join(dir.outputDir, ...name.split('/'));
    const mediaType = MEDIA_TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream';
    const ref = await artifacts.put(createReadStream(path), { mediaType });
    stored[name] = { ref: ref.ref, size: ref.size, mediaType: ref.mediaType };
  }
  return stored;
}
