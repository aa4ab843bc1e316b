/**
 * `import:<relative path>` sources: files an operator placed under configured import roots. The
 * path is checked lexically first (not empty, no NUL, not absolute, no `..` segment), then
 * resolved with every symlink followed (`realpath`) and accepted only if the real file lies inside
 * the real path of some root. A symlink inside a root that points out of every root is refused.
 *
 * The returned real path has no symlinks left; a file swapped for a symlink between this check and
 * the read is the operator's own doing (roots are operator-controlled directories), and readers
 * should still open it read-only.
 */
import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, sep, win32 } from 'node:path';
import { assetFailure } from './asset-failure.ts';

/** The scheme of an import source. */
export const IMPORT_PREFIX = 'import:';

function forbidden(source: string, why: string): Error {
  return assetFailure('ASSET_IMPORT_FORBIDDEN', `import source ${JSON.stringify(source)} is forbidden: ${why}`, { source, why });
}

/** The relative path of an import source, or a permanent `ASSET_IMPORT_FORBIDDEN`. */
function relativePathOf(source: string): string {
  if (!source.startsWith(IMPORT_PREFIX)) throw forbidden(source, `not an ${IMPORT_PREFIX}<relative path> source`);
  const path = source.slice(IMPORT_PREFIX.length);
  if (path === '') throw forbidden(source, 'empty path');
  if (path.includes('\0')) throw forbidden(source, 'NUL in path');
  // Both separators and Windows drive/UNC forms, so a path never means something else on another host.
  if (isAbsolute(path) || win32.isAbsolute(path) || /^[A-Za-z]:/.test(path)) throw forbidden(source, 'absolute path');
  if (path.split(/[\\/]/).includes('..')) throw forbidden(source, '".." segment');
  return path;
}

/** True when `child` is `parent` itself or lies below it (both real, absolute paths). */
function isInside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/** Real path of `path`, or undefined when it does not exist. */
async function realpathIfExists(path: string): Promise<string | undefined> {
  try {
    return await realpath(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw err;
  }
}

/**
 * Resolves `import:<relative path>` against `roots` (tried in order) and returns the real path of
 * the file. Throws permanent `ASSET_IMPORT_FORBIDDEN` for a path that is empty, absolute, has a
 * `..` segment or NUL, is not a regular file, or resolves outside the real path of every root;
 * permanent `ASSET_IMPORT_NOT_FOUND` when no root holds it.
 */
export async function resolveImport(source: string, roots: readonly string[]): Promise<string> {
  const path = relativePathOf(source);
  if (roots.length === 0) throw forbidden(source, 'no import roots are configured');
  const realRoots = (await Promise.all(roots.map(realpathIfExists))).filter((r): r is string => r !== undefined);
  for (const root of realRoots) {
    const real = await realpathIfExists(join(root, path)).catch((err: NodeJS.ErrnoException) => {
      throw err.code === 'ELOOP' ? forbidden(source, 'symlink loop') : err;
    });
    if (real === undefined) continue;
    if (!realRoots.some((r) => isInside(r, real) && r !== real)) throw forbidden(source, 'resolves outside every import root');
    if (!(await stat(real)).isFile()) throw forbidden(source, 'not a regular file');
    return real;
  }
  throw assetFailure('ASSET_IMPORT_NOT_FOUND', `import source ${JSON.stringify(source)} names no file under any import root`, { source });
}
