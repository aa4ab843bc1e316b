/**
 * The scripts of the Redis store: every `routines/<name>.lua` with every `routines/lib-*.lua` in
 * front of it (lib-keys.lua first), read once. The context defines them as commands; the layout
 * migrations (migrate.ts) run theirs the same way.
 */
import { readdirSync, readFileSync } from 'node:fs';

const ROUTINES = new URL('./routines/', import.meta.url);

/** The scripts of this code, by name (file name without `.lua`), each with the libs in front. */
function loadRoutines(): ReadonlyMap<string, string> {
  const files = readdirSync(ROUTINES).filter((f) => f.endsWith('.lua')).sort();
  // lib-keys.lua first: the other libs use its locals (P, int, k_*), which must be declared before them.
  const libNames = files.filter((f) => f.startsWith('lib-')).sort((a, b) => Number(b === 'lib-keys.lua') - Number(a === 'lib-keys.lua'));
  const libs = libNames.map((f) => readFileSync(new URL(f, ROUTINES), 'utf8'));
  const preamble = libs.join('\n');
  const routines = new Map<string, string>();
  for (const file of files) {
    if (file.startsWith('lib-')) continue;
    routines.set(file.slice(0, -'.lua'.length), `${preamble}\n${readFileSync(new URL(file, ROUTINES), 'utf8')}`);
  }
  return routines;
}

let routineSources: ReadonlyMap<string, string> | undefined;

/** The source of `routines/<name>.lua` with the libs in front, or undefined when there is none. */
export function routineSource(name: string): string | undefined {
  routineSources ??= loadRoutines();
  return routineSources.get(name);
}
