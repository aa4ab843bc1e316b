/**
 * The file arguments of `kiln assets add`: each is a file path or a glob pattern, expanded here
 * because Node 20 has no `fs.glob` and Windows shells (or quoted patterns) pass them unexpanded.
 *
 * Patterns: `*` matches any run of characters within one path segment, `?` one character, and a
 * segment that is exactly `**` matches zero or more directories (a final `**` matches every file
 * below). Every other character is literal (no `[...]`, `{a,b}` or escapes). As in shells, a wildcard does not match a
 * leading `.` unless the pattern segment itself starts with `.`; `**` does not enter hidden
 * directories or follow symbolic links to directories (which could loop). Only regular files (or
 * links to them) are results; each pattern's matches are sorted, and a file named twice is kept once.
 */
import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ValidationError } from '../../core/errors.ts';

/** A file to add: where it is and how to show it. */
export interface InputFile {
  /** Absolute path. */
  path: string;
  /** The path as the user wrote it, or as matched relative to the working directory. */
  display: string;
}

const GLOB_CHARS = /[*?]/;

/** True when `arg` contains a wildcard. */
export function isGlobPattern(arg: string): boolean {
  return GLOB_CHARS.test(arg);
}

/** The regular expression of one pattern segment (no `/` inside). */
export function segmentRegExp(segment: string): RegExp {
  let source = '';
  for (const ch of segment) {
    if (ch === '*') source += '[^/]*';
    else if (ch === '?') source += '[^/]';
    else source += ch.replace(/[\\^$.|+(){}[\]]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/** Whether a directory entry name matches a pattern segment, honouring the hidden-file rule. */
function segmentMatches(name: string, segment: string, regexp: RegExp): boolean {
  if (name.startsWith('.') && !segment.startsWith('.')) return false;
  return regexp.test(name);
}

async function listDir(dir: string): Promise<Dirent[]> {
  // An unreadable or vanished directory holds no matches, as in shells.
  return readdir(dir, { withFileTypes: true }).catch(() => []);
}

/** Follows a symbolic link (or not) to what the entry is. */
async function kindOf(dir: string, entry: Dirent): Promise<'file' | 'dir' | 'other'> {
  if (entry.isFile()) return 'file';
  if (entry.isDirectory()) return 'dir';
  if (!entry.isSymbolicLink()) return 'other';
  const target = await stat(join(dir, entry.name)).catch(() => undefined);
  if (target?.isFile()) return 'file';
  return target?.isDirectory() ? 'dir' : 'other';
}

/** Adds to `found` every file under `dir` matching `segments` from position `index` on. */
async function walk(dir: string, segments: readonly string[], index: number, found: Set<string>): Promise<void> {
  const segment = segments[index];
  if (segment === undefined) return;
  const last = index === segments.length - 1;
  if (segment === '**') {
    // Zero directories: the rest of the pattern applies here; then one more level, still at `**`.
    if (last) await walk(dir, [...segments, '*'], index + 1, found);
    else await walk(dir, segments, index + 1, found);
    for (const entry of await listDir(dir)) {
      if (entry.isDirectory() && !entry.name.startsWith('.')) await walk(join(dir, entry.name), segments, index, found);
    }
    return;
  }
  if (!isGlobPattern(segment)) {
    // A literal segment needs no listing (and works in directories that cannot be listed).
    const path = join(dir, segment);
    const target = await stat(path).catch(() => undefined);
    if (last && target?.isFile()) found.add(path);
    else if (!last && target?.isDirectory()) await walk(path, segments, index + 1, found);
    return;
  }
  const regexp = segmentRegExp(segment);
  for (const entry of await listDir(dir)) {
    if (!segmentMatches(entry.name, segment, regexp)) continue;
    const kind = await kindOf(dir, entry);
    if (last && kind === 'file') found.add(join(dir, entry.name));
    else if (!last && kind === 'dir') await walk(join(dir, entry.name), segments, index + 1, found);
  }
}

/** The files one pattern matches, sorted, as absolute paths. */
export async function matchPattern(pattern: string, cwd: string): Promise<string[]> {
  const absolute = isAbsolute(pattern);
  const root = absolute ? sep : cwd;
  const segments = pattern.split(sep === '/' ? '/' : /[\\/]/).filter((s) => s !== '' && s !== '.');
  const found = new Set<string>();
  await walk(resolve(root), segments, 0, found);
  return [...found].sort();
}

/** How a matched path is shown: relative to `cwd` when the pattern was relative. */
function displayOf(path: string, pattern: string, cwd: string): string {
  return isAbsolute(pattern) ? path : relative(cwd, path);
}

function whyNoMatch(arg: string, isDirectory: boolean): string {
  if (isGlobPattern(arg)) return `${arg} matches no file`;
  return isDirectory ? `${arg} is a directory (give ${join(arg, '*')} or ${join(arg, '**')})` : `${arg}: no such file`;
}

/**
 * Expands `args` (paths and patterns) into files in argument order. An argument that names an
 * existing file is taken as is, even with `*` in its name (the shell may have expanded it already).
 * Throws `ValidationError` listing every argument that matches no file, before anything is added.
 */
export async function expandFileArguments(args: readonly string[], cwd: string): Promise<InputFile[]> {
  const files: InputFile[] = [];
  const seen = new Set<string>();
  const problems: string[] = [];
  for (const arg of args) {
    const literal = resolve(cwd, arg);
    const literalStat = await stat(literal).catch(() => undefined);
    let matches: InputFile[];
    if (literalStat?.isFile()) matches = [{ path: literal, display: arg }];
    else if (isGlobPattern(arg)) matches = (await matchPattern(arg, cwd)).map((path) => ({ path, display: displayOf(path, arg, cwd) }));
    else matches = [];
    if (matches.length === 0) problems.push(whyNoMatch(arg, literalStat?.isDirectory() === true));
    for (const match of matches) {
      if (seen.has(match.path)) continue;
      seen.add(match.path);
      files.push(match);
    }
  }
  if (problems.length > 0) throw new ValidationError(`nothing added: ${problems.join('; ')}`, { details: { problems } });
  return files;
}
