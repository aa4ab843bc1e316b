/**
 * Extra pipeline modules (`--pipelines a.ts,b.ts` or `KILN_PIPELINES`): each module's default
 * export, a pipeline definition or an array of them, is registered beside the built-in ones.
 */
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError, type ConfigIssue } from '../core/errors.ts';
import type { PipelineDefinition } from '../core/pipeline/define-pipeline.ts';

/** Environment variable listing extra pipeline modules, comma-separated. */
export const PIPELINES_ENV = 'KILN_PIPELINES';

/** Splits a comma-separated module list, dropping blanks. */
export function parseModuleList(list: string | undefined): string[] {
  return (list ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function looksLikePipeline(value: unknown): value is PipelineDefinition {
  const v = value as Partial<PipelineDefinition> | null;
  return typeof v === 'object' && v !== null && typeof v.name === 'string' && Array.isArray(v.stages);
}

/** A path (relative to `cwd`) becomes a file URL; anything else is imported as a package name. */
function moduleUrl(spec: string, cwd: string): string {
  if (spec.startsWith('.') || isAbsolute(spec)) return pathToFileURL(resolve(cwd, spec)).href;
  return spec;
}

async function importDefinitions(spec: string, cwd: string, issues: ConfigIssue[]): Promise<PipelineDefinition[]> {
  let mod: { default?: unknown };
  try {
    mod = (await import(moduleUrl(spec, cwd))) as { default?: unknown };
  } catch (err) {
    issues.push({ source: 'flags', path: '--pipelines', message: `cannot import ${spec}: ${err instanceof Error ? err.message : String(err)}` });
    return [];
  }
  const exported = Array.isArray(mod.default) ? (mod.default as unknown[]) : [mod.default];
  if (exported.length === 0 || !exported.every(looksLikePipeline)) {
    issues.push({ source: 'flags', path: '--pipelines', message: `${spec} must default-export a pipeline definition or an array of them` });
    return [];
  }
  return exported;
}

/**
 * `builtin` plus the definitions exported by `specs`. Throws one {@link ConfigError} naming every
 * module that failed to load and every duplicate pipeline name.
 */
export async function loadPipelines(builtin: readonly PipelineDefinition[], specs: readonly string[], cwd: string): Promise<PipelineDefinition[]> {
  const issues: ConfigIssue[] = [];
  const all = [...builtin];
  for (const spec of specs) all.push(...(await importDefinitions(spec, cwd, issues)));
  const seen = new Set<string>();
  for (const p of all) {
    if (seen.has(p.name)) issues.push({ source: 'flags', path: '--pipelines', message: `pipeline ${p.name} is registered twice` });
    seen.add(p.name);
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return all;
}
