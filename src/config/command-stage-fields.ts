/**
 * The fields of one stage declared in kiln.yaml, resolved into a {@link CommandStageSpec}: the
 * command lines (split into argv, programs made absolute, templates checked against what exists
 * where they are used), the policy fields, exit codes, cache, lock and publications. Every
 * problem is reported with its field's position; a field that failed the schema check is skipped
 * (already reported), so one mistake never hides another.
 */
import { isAbsolute, resolve } from 'node:path';
import { splitArgv } from '../commands/argv.ts';
import {
  DEFAULT_EXIT_CODES,
  type CommandCacheSpec,
  type CommandLockSpec,
  type CommandPublishSpec,
  type CommandSpec,
  type ExitOutcome,
} from '../commands/command-spec.ts';
import { hasTemplate, parseRef, parseTemplate, templateRefProblem, templateRefs, type TemplateScope } from '../commands/templates.ts';
import type { StagePolicyOverrides } from '../core/policy/stage-policy.ts';
import { DEFAULT_COMMAND_CACHE_TTL_MS } from './command-schema.ts';
import { isPlainObject } from './validate.ts';

/** Where a stage sits and how to report on it. */
export interface StageFieldContext {
  pipeline: string;
  stage: string;
  /** Path of the stage's mapping in the file (`['pipeline', 'stages', '0']`). */
  path: readonly string[];
  /** Folder of kiln.yaml: relative programs and cwd are resolved against it. */
  baseDir: string;
  report(path: readonly string[], message: string): void;
  /** Answers whether a program can be started (kiln validate); absent: not checked. */
  findProgram?: ((program: string, pathVariable: string | undefined) => boolean) | undefined;
}

/** Reports every reference of `text` that cannot be filled in where it is used. */
export function checkTemplates(c: StageFieldContext, path: readonly string[], text: string, scope: TemplateScope, allowed?: (kind: string) => string | null): void {
  const template = parseTemplate(text);
  for (const problem of template.problems) c.report(path, problem.message);
  for (const ref of templateRefs(template)) {
    const restricted = allowed?.(ref.kind) ?? null;
    const problem = restricted ?? templateRefProblem(ref, scope);
    if (problem !== null) c.report(path, problem);
  }
}

/** `run` or `rollback` as a command; null when it cannot be (problems reported). */
export function resolveCommand(
  c: StageFieldContext,
  field: 'run' | 'rollback',
  raw: unknown,
  stage: { shell: boolean; env: Record<string, string>; cwd: string | null },
  scope: TemplateScope,
): CommandSpec | null {
  const path = [...c.path, field];
  let argv: string[];
  if (typeof raw === 'string') {
    if (stage.shell) {
      if (hasTemplate(raw)) c.report(path, 'templates are not filled into shell scripts (a value would become shell code): pass them in env (env: {NAME: "{{input.x}}"}) and use "$NAME"');
      return { argv: [raw], shell: true, env: stage.env, cwd: stage.cwd };
    }
    const split = splitArgv(raw);
    if ('problem' in split) {
      c.report(path, `${split.problem} in ${JSON.stringify(raw)}`);
      return null;
    }
    argv = split.argv;
  } else if (Array.isArray(raw) && raw.every((a) => typeof a === 'string')) {
    if (stage.shell) c.report(path, 'shell: true takes the script as text, not a list');
    argv = [...raw];
  } else {
    return null;
  }
  const [program, ...args] = argv;
  if (program === undefined) {
    c.report(path, 'the command is empty');
    return null;
  }
  const programPath = Array.isArray(raw) ? [...path, '0'] : path;
  if (hasTemplate(program)) c.report(programPath, 'the program to run cannot be a template (a run input would choose what runs); template its arguments instead');
  // A program written with a slash is a file relative to kiln.yaml; a bare name is looked up on PATH.
  const absolute = program.includes('/') && !isAbsolute(program) ? resolve(c.baseDir, program) : program;
  if (c.findProgram && !hasTemplate(program) && !c.findProgram(absolute, stage.env['PATH'])) {
    c.report(programPath, program.includes('/') ? `command not found or not executable: ${absolute}` : `command not found on PATH: ${program}`);
  }
  args.forEach((arg, i) => checkTemplates(c, Array.isArray(raw) ? [...path, String(i + 1)] : path, arg, scope));
  return { argv: [absolute, ...args], shell: false, env: stage.env, cwd: stage.cwd };
}

/** `env:` with every value as text, templates checked. */
export function resolveEnv(c: StageFieldContext, raw: unknown, scope: TemplateScope): Record<string, string> {
  const env: Record<string, string> = {};
  if (!isPlainObject(raw)) return env;
  for (const [name, value] of Object.entries(raw)) {
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') continue;
    env[name] = String(value);
    checkTemplates(c, [...c.path, 'env', name], env[name], scope);
  }
  return env;
}

/** `retry`, `timeout`, `lease`, `concurrency`, `priority` as stage policy overrides (worker defaults below them). */
export function resolvePolicy(raw: Record<string, unknown>, worker: { concurrency?: unknown; timeout?: unknown }): StagePolicyOverrides {
  const policy: StagePolicyOverrides = {};
  const retry = raw['retry'];
  if (typeof retry === 'number') policy.maxAttempts = retry + 1;
  if (isPlainObject(retry)) {
    if (typeof retry['retries'] === 'number') policy.maxAttempts = retry['retries'] + 1;
    const backoff: NonNullable<StagePolicyOverrides['backoff']> = {};
    if (typeof retry['backoff'] === 'number') backoff.baseMs = retry['backoff'];
    if (typeof retry['maxBackoff'] === 'number') backoff.capMs = retry['maxBackoff'];
    if (Object.keys(backoff).length > 0) policy.backoff = backoff;
  }
  const timeout = raw['timeout'] ?? worker.timeout;
  if (typeof timeout === 'number') policy.timeoutMs = timeout;
  if (typeof raw['lease'] === 'number') policy.leaseMs = raw['lease'];
  const concurrency = raw['concurrency'] ?? worker.concurrency;
  if (typeof concurrency === 'number') policy.concurrency = concurrency;
  if (typeof raw['priority'] === 'number') policy.priority = raw['priority'];
  return policy;
}

/** The exit-code table: the defaults, then the stage's own entries. */
export function resolveExitCodes(raw: unknown): Record<string, ExitOutcome> {
  const table: Record<string, ExitOutcome> = { ...DEFAULT_EXIT_CODES };
  if (isPlainObject(raw)) for (const [key, value] of Object.entries(raw)) if (typeof value === 'string') table[key] = value as ExitOutcome;
  return table;
}

/** `{{x}}` or `x` as the reference text `x`. */
function referenceText(text: string): string {
  const match = /^\{\{\s*(.*?)\s*\}\}$/.exec(text.trim());
  return match?.[1] ?? text.trim();
}

/** `cache:` as a spec (null when absent or invalid). */
export function resolveCache(c: StageFieldContext, raw: unknown, scope: TemplateScope): CommandCacheSpec | null {
  const ownLru = `${c.pipeline}.${c.stage}`;
  if (typeof raw === 'string') {
    if (!/^local(:.+)?$/.test(raw)) return null;
    return { key: null, ttlMs: DEFAULT_COMMAND_CACHE_TTL_MS, staleMs: 0, local: raw === 'local' ? ownLru : raw.slice('local:'.length) };
  }
  if (!isPlainObject(raw)) return null;
  let key: string[] | null = null;
  if (Array.isArray(raw['key'])) {
    key = [];
    raw['key'].forEach((item, i) => {
      if (typeof item !== 'string') return;
      const text = referenceText(item);
      const ref = parseRef(text);
      const problem = typeof ref === 'string' ? ref : templateRefProblem(ref, scope);
      if (problem !== null) c.report([...c.path, 'cache', 'key', String(i)], problem);
      key?.push(text);
    });
  }
  const local = raw['local'];
  return {
    key,
    ttlMs: typeof raw['ttl'] === 'number' ? raw['ttl'] : DEFAULT_COMMAND_CACHE_TTL_MS,
    staleMs: typeof raw['staleWhileRevalidate'] === 'number' ? raw['staleWhileRevalidate'] : 0,
    local: local === true ? ownLru : typeof local === 'string' ? local : null,
  };
}

/** `lock:` as declared; its key may name the run's input (and run fields) only: the lock is taken before the stage runs. */
export function resolveLock(c: StageFieldContext, raw: unknown, scope: TemplateScope, workerTtlMs: unknown): CommandLockSpec | null {
  if (!isPlainObject(raw) || typeof raw['key'] !== 'string') return null;
  const inputOnly = (kind: string): string | null => (kind === 'input' || kind === 'run' ? null : 'a lock key may name input.<field> and run.<field> only');
  checkTemplates(c, [...c.path, 'lock', 'key'], raw['key'], scope, inputOnly);
  const ttl = raw['ttl'] ?? workerTtlMs;
  return { key: raw['key'], ttlMs: typeof ttl === 'number' ? ttl : null };
}

/** `publish:` as a list of specs. */
export function resolvePublish(c: StageFieldContext, raw: unknown, scope: TemplateScope): CommandPublishSpec[] {
  const entries = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  const specs: CommandPublishSpec[] = [];
  entries.forEach((entry, i) => {
    if (!isPlainObject(entry) || typeof entry['file'] !== 'string' || typeof entry['profile'] !== 'string') return;
    const path = Array.isArray(raw) ? [...c.path, 'publish', String(i)] : [...c.path, 'publish'];
    const file = entry['file'];
    if (file.startsWith('/') || file.split('/').some((s) => s === '' || s === '.' || s === '..')) {
      c.report([...path, 'file'], `must be a file name inside KILN_OUTPUT_DIR, got ${JSON.stringify(file)}`);
    }
    const subject = typeof entry['subject'] === 'string' ? entry['subject'] : null;
    if (subject !== null) checkTemplates(c, [...path, 'subject'], subject, scope);
    specs.push({ file, profile: entry['profile'], subject });
  });
  return specs;
}
