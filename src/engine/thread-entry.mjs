// Entry of kiln's worker threads (piscina). Plain JavaScript so it loads without a TypeScript
// loader; it registers tsx itself so stage modules may be TypeScript. It imports the stage module,
// calls the named export with plain data and returns the output, or the failure as data: errors
// lose their class and fields when cloned across threads, so they are classified here.
import { register } from 'tsx/esm/api';

if (!globalThis.__kilnTsxRegistered) {
  register();
  globalThis.__kilnTsxRegistered = true;
}

const modules = new Map();
let classifyError;

/** @param {{ url: string, exportName: string, input: unknown }} task */
export default async function runStage(task) {
  try {
    let mod = modules.get(task.url);
    if (!mod) {
      mod = await import(task.url);
      modules.set(task.url, mod);
    }
    const fn = mod[task.exportName];
    if (typeof fn !== 'function') throw new Error(`${task.url} has no function export "${task.exportName}"`);
    return { ok: true, output: (await fn(task.input)) ?? null };
  } catch (err) {
    classifyError ??= (await import('../core/policy/retry.ts')).classifyError;
    return { ok: false, error: classifyError(err) };
  }
}
