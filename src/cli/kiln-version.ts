/** kiln's version, from package.json. */
import { createRequire } from 'node:module';

/** The `version` of kiln's package.json (read on each call; callers call it once). */
export function kilnVersion(): string {
  return (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
}
