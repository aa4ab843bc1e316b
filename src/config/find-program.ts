/**
 * Whether a program can be started, the way execvp would find it: a path with a slash must be an
 * executable file; a bare name must be one in a folder of PATH. Used by `kiln validate` only: a
 * worker does not refuse to start over a program that another host may have.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** True when `program` (absolute, or a bare name looked up on `pathVariable`) can be executed. */
export function programExists(program: string, pathVariable: string | undefined = process.env['PATH']): boolean {
  if (program.includes('/')) return isExecutableFile(program);
  return (pathVariable ?? '').split(delimiter).some((dir) => dir !== '' && isExecutableFile(join(dir, program)));
}
