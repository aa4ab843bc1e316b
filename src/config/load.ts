/**
 * Loads the configuration: defaults < `kiln.yaml` < environment < flags, validated as a whole.
 * Every problem from every source is collected and thrown together as one {@link ConfigError},
 * so a user fixes their setup in one pass instead of one error per start attempt.
 */
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { ConfigError, type ConfigIssue } from '../core/errors.ts';
import type { PipelineDefinition } from '../core/pipeline/define-pipeline.ts';
import type { PolicyOverrides } from '../engine/kiln-types.ts';
import { readConfigFile, type ConfigFile } from './config-file.ts';
import { resolveCommandPipelines } from './command-pipelines.ts';
import { resolveLockSettings } from './lock-settings.ts';
import { resolvePipelineSettings } from './pipeline-settings.ts';
import { resolvePolicyOverrides } from './policy-overrides.ts';
import { resolveRetention } from './retention-settings.ts';
import {
  CONFIG_DEFAULTS,
  CONFIG_FILE_ENV,
  ENV_BINDINGS,
  FLAG_BINDINGS,
  fieldSchema,
  PATH_FIELDS,
  SECTIONS,
  STORE_SPEC,
  type ResolvedConfig,
  type ResolvedSections,
} from './schema.ts';
import { resolveArtifacts } from './artifacts-selection.ts';
import { resolveAdmission } from './admission-settings.ts';
import { applyStoreSpec, checkFileStore, resolveStore } from './store-selection.ts';
import { isPlainObject, normalizeDurations, validateAgainst } from './validate.ts';

/** Name of the config file looked up in the working directory when none is given. */
export const DEFAULT_CONFIG_FILE = 'kiln.yaml';

/** Inputs of {@link loadConfig}. */
export interface LoadConfigOptions {
  /** Explicit `--config` path (must exist); else `KILN_CONFIG`; else `./kiln.yaml` if present; else none. */
  file?: string;
  /** @default process.env */
  env?: Record<string, string | undefined>;
  /** CLI flags; they win over everything else. `store` is a spec: `postgres://...`, `redis://...` or `sqlite:<path>`. */
  flags?: { db?: string; store?: string; host?: string; port?: number; logLevel?: string; logFormat?: string };
  /** Base of relative paths given by env, flags and defaults. @default process.cwd() */
  cwd?: string;
  /** Registered pipelines, to reject unknown pipeline and stage names in `pipelines:`. */
  pipelines: readonly PipelineDefinition[];
  /**
   * Checks that the programs of declared pipelines can be started (`kiln validate`); absent: not
   * checked (a worker starts even when a program another host has is missing here).
   */
  findProgram?: (program: string, pathVariable: string | undefined) => boolean;
}

/** Section -> field -> value, as one source provides them. */
type Layer = Record<string, Record<string, unknown>>;

/**
 * Resolves the configuration. Relative paths from the file are taken relative to the file's
 * folder; from env, flags and defaults relative to `cwd`. Throws {@link ConfigError} listing
 * every problem (file issues carry their 1-based line).
 */
export function loadConfig(options: LoadConfigOptions): ResolvedConfig {
  const env = options.env ?? process.env;
  const cwd = resolve(options.cwd ?? process.cwd());
  const issues: ConfigIssue[] = [];
  const source = findConfigFile(options.file, env, cwd, issues);
  let fileLayer: Layer = {};
  let file: ConfigFile | null = null;
  let policies: PolicyOverrides = {};
  let schemaIssuePaths: string[] = [];
  if (source !== null) {
    const read = readConfigFile(source);
    issues.push(...read.issues);
    file = read.file;
    if (read.file) {
      issues.push(...checkFileStore(read.file));
      fileLayer = resolvePaths(pickSections(read.file.value), dirname(source));
      schemaIssuePaths = read.issues.map((i) => i.path);
      const overrides = resolvePolicyOverrides(read.file, options.pipelines, schemaIssuePaths);
      issues.push(...overrides.issues);
      policies = overrides.policies;
    }
  }
  const envLayer = readEnv(env, cwd, issues);
  const flagLayer = readFlags(options.flags ?? {}, cwd, issues);
  const defaults = resolvePaths(CONFIG_DEFAULTS as unknown as Layer, cwd);
  const layers = [defaults, fileLayer, envLayer, flagLayer];
  const store = resolveStore(layers.map((l) => l['store']));
  // A URL of the other store in kiln.yaml is already reported (checkFileStore) at store.url.
  if (store === null && !issues.some((i) => i.path === 'store.url')) issues.push(missingUrlIssue(file));
  const merged = mergeLayers(layers);
  // worker.lock is set in the file only; its default follows the selected store.
  const lock = store === null ? null : resolveLockSettings(fileLayer['worker']?.['lock'], store, file, issues);
  const pipelineSettings = resolvePipelineSettings(file, options.pipelines);
  issues.push(...pipelineSettings.issues);
  const declared = file
    ? resolveCommandPipelines({
        file,
        registered: options.pipelines,
        worker: merged['worker'] as { workDir: string },
        findProgram: options.findProgram,
        pathsWithIssues: schemaIssuePaths,
      })
    : { specs: [], issues: [] };
  issues.push(...declared.issues);
  const queues = new Set([...options.pipelines, ...declared.specs].flatMap((p) => p.stages.map((stage) => `${p.name}.${stage.name}`)));
  const admission = resolveAdmission(file, queues, schemaIssuePaths);
  issues.push(...admission.issues);
  if (issues.length > 0) throw new ConfigError(inFileOrder(issues, source));
  const artifacts = resolveArtifacts(merged['artifacts'] ?? {}, [fileLayer['artifacts'], envLayer['artifacts'], flagLayer['artifacts']]);
  // http.auth is set in the file only; its fields default one by one (a section merges whole).
  const http = { ...merged['http'], auth: { ...CONFIG_DEFAULTS.http.auth, ...(fileLayer['http']?.['auth'] as object | undefined) } };
  // retention is set in the file only; its fields default one by one and resolve to a policy.
  const retention = resolveRetention(fileLayer['retention']);
  const sections = { ...merged, http, worker: { ...merged['worker'], lock }, store, artifacts, retention } as unknown as ResolvedSections;
  return deepFreeze({
    source,
    ...sections,
    policies,
    admission: admission.admission,
    settings: pipelineSettings.settings,
    commandPipelines: declared.specs,
  });
}

/**
 * `kind: postgres` or `kind: redis` in the file (env and flags select those only with a URL) and
 * no URL of that store anywhere.
 */
function missingUrlIssue(file: ConfigFile | null): ConfigIssue {
  const store = file?.value['store'];
  const kind = isPlainObject(store) && typeof store['kind'] === 'string' ? store['kind'] : 'postgres';
  const message = `kind is ${kind} but no URL is set (store.url, ${STORE_SPEC.env} or ${STORE_SPEC.flag})`;
  return { source: file?.source ?? 'file', path: 'store.kind', message, ...file?.positionOf(['store', 'kind'], 'key') };
}

/** The file's issues by line (schema checks report in schema order, readers want file order), then the rest. */
function inFileOrder(issues: readonly ConfigIssue[], source: string | null): ConfigIssue[] {
  const fromFile = issues.filter((i) => i.source === source);
  const others = issues.filter((i) => i.source !== source);
  // Array.prototype.sort is stable, so issues on one line keep their discovery order.
  fromFile.sort((a, b) => (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER) || (a.column ?? 0) - (b.column ?? 0));
  return [...fromFile, ...others];
}

/** The config file to read (absolute), or null; a named file that does not exist is an issue. */
function findConfigFile(file: string | undefined, env: Record<string, string | undefined>, cwd: string, issues: ConfigIssue[]): string | null {
  const fromEnv = env[CONFIG_FILE_ENV];
  const named =
    file !== undefined
      ? { path: file, source: 'flags', name: '--config' }
      : fromEnv
        ? { path: fromEnv, source: 'env', name: CONFIG_FILE_ENV }
        : undefined;
  if (named) {
    const absolute = resolve(cwd, named.path);
    if (existsSync(absolute)) return absolute;
    issues.push({ source: named.source, path: named.name, message: `config file not found: ${absolute}` });
    return null;
  }
  const implicit = resolve(cwd, DEFAULT_CONFIG_FILE);
  return existsSync(implicit) ? implicit : null;
}

/** Environment variables bound in `ENV_BINDINGS`; later bindings of the same field win. */
function readEnv(env: Record<string, string | undefined>, cwd: string, issues: ConfigIssue[]): Layer {
  const layer: Layer = {};
  for (const { name, field } of ENV_BINDINGS) {
    const raw = env[name];
    // An empty variable is how shells and compose files "unset" things; treat it as absent.
    if (raw === undefined || raw === '') continue;
    const value = checkField(field, coerceText(field, raw), (message) => issues.push({ source: 'env', path: name, message: `${message} (sets ${field})` }));
    if (value !== undefined) setField(layer, field, value);
  }
  const spec = env[STORE_SPEC.env];
  if (spec !== undefined && spec !== '') {
    layer['store'] = applyStoreSpec(layer['store'] ?? {}, spec, { source: 'env', spec: STORE_SPEC.env, path: 'KILN_DB' }, issues);
  }
  return resolvePaths(layer, cwd);
}

/** CLI flags bound in `FLAG_BINDINGS`. */
function readFlags(flags: NonNullable<LoadConfigOptions['flags']>, cwd: string, issues: ConfigIssue[]): Layer {
  const layer: Layer = {};
  for (const [key, { flag, field }] of Object.entries(FLAG_BINDINGS)) {
    const raw = flags[key as keyof typeof flags];
    if (raw === undefined) continue;
    const value = checkField(field, raw, (message) => issues.push({ source: 'flags', path: flag, message }));
    if (value !== undefined) setField(layer, field, value);
  }
  if (flags.store !== undefined) {
    layer['store'] = applyStoreSpec(layer['store'] ?? {}, flags.store, { source: 'flags', spec: STORE_SPEC.flag, path: FLAG_BINDINGS.db.flag }, issues);
  }
  return resolvePaths(layer, cwd);
}

/** Validates one value against its field schema; returns it (durations in ms) or reports and returns undefined. */
function checkField(field: string, value: unknown, report: (message: string) => void): unknown {
  const schema = fieldSchema(field);
  const problems = [...validateAgainst(schema, value)];
  const normalized = normalizeDurations(schema, value);
  problems.push(...normalized.problems);
  const first = problems[0];
  if (first) {
    report(first.message);
    return undefined;
  }
  return normalized.value;
}

/** Env values are text; integer fields get a number when the text is exactly an integer. */
function coerceText(field: string, raw: string): unknown {
  if (fieldSchema(field)['type'] === 'integer' && /^-?\d+$/.test(raw.trim())) return Number(raw.trim());
  return raw;
}

function pickSections(value: Record<string, unknown>): Layer {
  const layer: Layer = {};
  for (const section of SECTIONS) {
    const entry = value[section];
    if (isPlainObject(entry)) layer[section] = Object.fromEntries(Object.entries(entry).filter(([, v]) => v !== undefined));
  }
  return layer;
}

function setField(layer: Layer, field: string, value: unknown): void {
  const [section, key] = field.split('.') as [string, string];
  layer[section] = { ...layer[section], [key]: value };
}

/** Makes path fields absolute against `base`; SQLite's `:memory:` is not a path. */
function resolvePaths(layer: Layer, base: string): Layer {
  const out: Layer = { ...layer };
  for (const field of PATH_FIELDS) {
    const [section, key] = field.split('.') as [string, string];
    const value = out[section]?.[key];
    if (typeof value !== 'string' || value === ':memory:' || isAbsolute(value)) continue;
    out[section] = { ...out[section], [key]: resolve(base, value) };
  }
  return out;
}

function mergeLayers(layers: readonly Layer[]): Layer {
  const out: Layer = {};
  for (const layer of layers) {
    for (const [section, fields] of Object.entries(layer)) out[section] = { ...out[section], ...fields };
  }
  return out;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
