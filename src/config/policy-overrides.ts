/**
 * The `pipelines:` section of `kiln.yaml`: checks names against the registered pipelines, folds each
 * pipeline's `defaults` into its stages and checks the resulting policies the way the engine will
 * resolve them (definition defaults, stage policy, then these overrides).
 */
import type { ConfigIssue } from '../core/errors.ts';
import type { PipelineDefinition } from '../core/pipeline/define-pipeline.ts';
import {
  checkStagePolicy,
  DEFAULT_STAGE_POLICY,
  mergeStagePolicy,
  type StagePolicyOverrides,
} from '../core/policy/stage-policy.ts';
import type { PolicyOverrides } from '../engine/kiln-types.ts';
import { isDeclaredPipelineEntry } from './command-schema.ts';
import type { ConfigFile } from './config-file.ts';
import { isPlainObject } from './validate.ts';

/** Result of {@link resolvePolicyOverrides}. */
export interface PolicyOverridesResult {
  policies: PolicyOverrides;
  issues: ConfigIssue[];
}

/**
 * Resolves `pipelines:` of a validated file. Pipelines with schema issues (`pathsWithIssues`) are
 * only name-checked: their values cannot be trusted for a resolved-policy check.
 */
export function resolvePolicyOverrides(
  file: ConfigFile,
  definitions: readonly PipelineDefinition[],
  pathsWithIssues: readonly string[],
): PolicyOverridesResult {
  const section = file.value['pipelines'];
  const policies: Record<string, Record<string, StagePolicyOverrides>> = {};
  const issues: ConfigIssue[] = [];
  if (!isPlainObject(section)) return { policies, issues };
  const issue = (path: string[], message: string, at: { line: number; column: number } | undefined): void => {
    issues.push({ source: file.source, path: path.join('.'), ...at, message });
  };
  for (const [name, entry] of Object.entries(section)) {
    // A list of stages declares a pipeline (command-pipelines.ts), it overrides none.
    if (isDeclaredPipelineEntry(entry)) continue;
    const definition = definitions.find((d) => d.name === name);
    if (!definition) {
      const known = definitions.map((d) => d.name).join(', ') || 'none';
      issue(['pipelines', name], `unknown pipeline "${name}" (registered: ${known})`, file.positionOf(['pipelines', name], 'key'));
      continue;
    }
    if (!isPlainObject(entry)) continue;
    const stageNames = definition.stages.map((s) => s.name);
    const stages = isPlainObject(entry['stages']) ? entry['stages'] : {};
    for (const stage of Object.keys(stages)) {
      if (stageNames.includes(stage)) continue;
      const path = ['pipelines', name, 'stages', stage];
      issue(path, `unknown stage "${stage}" of pipeline ${name} (stages: ${stageNames.join(', ')})`, file.positionOf(path, 'key'));
    }
    const prefix = `pipelines.${name}`;
    if (pathsWithIssues.some((p) => p === prefix || p.startsWith(`${prefix}.`))) continue;
    const folded = foldDefaults(entry, stageNames);
    policies[name] = folded;
    for (const [stage, overrides] of Object.entries(folded)) {
      const stageDef = definition.stages.find((s) => s.name === stage);
      const resolved = mergeStagePolicy(DEFAULT_STAGE_POLICY, definition.defaults, stageDef?.policy, overrides);
      for (const [field, message] of checkStagePolicy(resolved)) {
        issue(['pipelines', name, 'stages', stage, ...field.split('.')], `${message} (resolved policy)`, lineOfField(file, name, stage, field));
      }
    }
  }
  return { policies, issues };
}

/**
 * pipeline entry -> stage -> overrides. With `defaults`, every stage of the definition gets an entry
 * (defaults under its own fields); without, only the stages listed.
 */
function foldDefaults(entry: Record<string, unknown>, stageNames: readonly string[]): Record<string, StagePolicyOverrides> {
  const defaults = isPlainObject(entry['defaults']) ? (entry['defaults'] as StagePolicyOverrides) : undefined;
  const stages = (isPlainObject(entry['stages']) ? entry['stages'] : {}) as Record<string, StagePolicyOverrides>;
  const out: Record<string, StagePolicyOverrides> = {};
  for (const stage of stageNames) {
    const own = stages[stage];
    if (!own && !defaults) continue;
    out[stage] = layer(defaults, own);
  }
  return out;
}

/** `upper` over `lower`, field by field (and inside `backoff` and `lock`); unset fields stay absent. */
function layer(lower: StagePolicyOverrides | undefined, upper: StagePolicyOverrides | undefined): StagePolicyOverrides {
  const out: StagePolicyOverrides = { ...defined(lower), ...defined(upper) };
  const backoff = { ...defined(lower?.backoff), ...defined(upper?.backoff) };
  if (Object.keys(backoff).length > 0) out.backoff = backoff;
  else delete out.backoff;
  const lock = { ...defined(lower?.lock), ...defined(upper?.lock) };
  if (Object.keys(lock).length > 0) out.lock = lock;
  else delete out.lock;
  return out;
}

function defined<T extends object>(o: T | undefined): Partial<T> {
  if (!o) return {};
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** A problem reported on one field may be caused by another one set in the file (lease below heartbeat). */
const RELATED_FIELDS: Readonly<Record<string, readonly string[]>> = {
  heartbeatMs: ['leaseMs'],
  'backoff.capMs': ['backoff.baseMs'],
  'lock.ttlMs': ['heartbeatMs', 'leaseMs'],
  'lock.key': ['lock'],
};

/**
 * Position where `field` (or a related field) was set for the stage: its own entry, else the
 * pipeline's defaults, else the stage key, else the pipeline key.
 */
function lineOfField(file: ConfigFile, pipeline: string, stage: string, field: string): { line: number; column: number } | undefined {
  const stagePath = ['pipelines', pipeline, 'stages', stage];
  const defaultsPath = ['pipelines', pipeline, 'defaults'];
  for (const candidate of [field, ...(RELATED_FIELDS[field] ?? [])]) {
    const segments = candidate.split('.');
    for (const base of [stagePath, defaultsPath]) {
      if (valueAt(file.value, [...base, ...segments]) !== undefined) return file.positionOf([...base, ...segments]);
    }
  }
  if (valueAt(file.value, stagePath) !== undefined) return file.positionOf(stagePath, 'key');
  return file.positionOf(['pipelines', pipeline], 'key');
}

function valueAt(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const key of path) {
    if (!isPlainObject(node)) return undefined;
    node = node[key];
  }
  return node;
}
