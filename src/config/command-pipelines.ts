/**
 * Pipelines declared in kiln.yaml (`pipeline:` and `pipelines.<name>` with a list of stages),
 * resolved into {@link CommandPipelineSpec}s with every problem reported at its line and column:
 * names (of pipelines, stages, queues) that clash, template references to inputs that are not
 * declared or to stages that do not exist or have not run yet, invalid resolved policies, and,
 * when asked (`kiln validate`), programs that cannot be found.
 */
import { dirname, resolve } from 'node:path';
import type { CommandPipelineSpec, CommandStageSpec, InputSpec, InputType } from '../commands/command-spec.ts';
import type { TemplateScope } from '../commands/templates.ts';
import type { ConfigIssue } from '../core/errors.ts';
import type { JsonValue } from '../core/model.ts';
import { PIPELINE_NAME, queueName, type PipelineDefinition } from '../core/pipeline/define-pipeline.ts';
import { checkStagePolicy, DEFAULT_STAGE_POLICY, mergeStagePolicy } from '../core/policy/stage-policy.ts';
import { DEFAULT_PIPELINE_NAME, isDeclaredPipelineEntry } from './command-schema.ts';
import {
  resolveCache,
  resolveCommand,
  resolveEnv,
  resolveExitCodes,
  resolveLock,
  resolvePolicy,
  resolvePublish,
  type StageFieldContext,
} from './command-stage-fields.ts';
import type { ConfigFile } from './config-file.ts';
import { isPlainObject } from './validate.ts';

/** Inputs of {@link resolveCommandPipelines}. */
export interface CommandPipelinesOptions {
  file: ConfigFile;
  /** Pipelines registered in code: declared ones must not take their names or queues. */
  registered: readonly PipelineDefinition[];
  /** The resolved `worker` section (workDir absolute; concurrency, timeout, lock as in the file). */
  worker: { workDir: string; concurrency?: unknown; timeout?: unknown; lock?: unknown };
  /** `kiln validate`: answers whether a program can be started. */
  findProgram?: StageFieldContext['findProgram'];
  /** Dotted paths the schema check already reported: their values cannot be trusted for a resolved-policy check. */
  pathsWithIssues: readonly string[];
}

/** Result of {@link resolveCommandPipelines}. */
export interface CommandPipelinesResult {
  specs: CommandPipelineSpec[];
  issues: ConfigIssue[];
}

/** A declared pipeline as found in the file. */
interface Declared {
  name: string;
  path: string[];
  value: Record<string, unknown>;
}

/** The declared pipelines of a file, with the path of each. */
function declaredPipelines(value: Record<string, unknown>): Declared[] {
  const found: Declared[] = [];
  const single = value['pipeline'];
  if (isPlainObject(single)) {
    const name = typeof single['name'] === 'string' ? single['name'] : DEFAULT_PIPELINE_NAME;
    found.push({ name, path: ['pipeline'], value: single });
  }
  const many = value['pipelines'];
  if (isPlainObject(many)) {
    for (const [name, entry] of Object.entries(many)) {
      if (isPlainObject(entry) && isDeclaredPipelineEntry(entry)) found.push({ name, path: ['pipelines', name], value: entry });
    }
  }
  return found;
}

/** `inputs:` as specs; null when the pipeline declares none. */
function resolveInputs(raw: unknown): Record<string, InputSpec> | null {
  if (!isPlainObject(raw)) return null;
  const inputs: Record<string, InputSpec> = {};
  for (const [name, declaration] of Object.entries(raw)) {
    if (typeof declaration === 'string') inputs[name] = { type: declaration as InputType, required: true };
    else if (isPlainObject(declaration)) {
      const hasDefault = Object.hasOwn(declaration, 'default');
      inputs[name] = {
        type: (typeof declaration['type'] === 'string' ? declaration['type'] : 'any') as InputType,
        required: typeof declaration['required'] === 'boolean' ? declaration['required'] : !hasDefault,
        ...(hasDefault ? { default: declaration['default'] as JsonValue } : {}),
      };
    }
  }
  return inputs;
}

/** Resolves every declared pipeline of the file. */
export function resolveCommandPipelines(options: CommandPipelinesOptions): CommandPipelinesResult {
  const { file } = options;
  const issues: ConfigIssue[] = [];
  const report = (path: readonly string[], message: string, at: 'key' | 'value' = 'value'): void => {
    issues.push({ source: file.source, path: path.join('.'), ...file.positionOf(path, at), message });
  };
  // Queues already taken: every registered stage's, then each declared stage's as it is resolved.
  const queues = new Map<string, string>();
  for (const p of options.registered) for (const s of p.stages) queues.set(s.queue ?? queueName(p.name, s.name), `${p.name}.${s.name}`);
  const names = new Set(options.registered.map((p) => p.name));
  const specs: CommandPipelineSpec[] = [];
  for (const declared of declaredPipelines(file.value)) {
    const namePath = declared.path[0] === 'pipeline' ? ['pipeline', 'name'] : declared.path;
    if (!PIPELINE_NAME.test(declared.name)) report(namePath, `pipeline name "${declared.name}" must match ${PIPELINE_NAME.source}`, 'key');
    else if (names.has(declared.name)) report(namePath, `pipeline ${declared.name} is already registered (built in, from --pipelines, or declared twice); pick another name`, 'key');
    names.add(declared.name);
    specs.push(resolvePipeline(options, declared, report, queues));
  }
  return { specs, issues };
}

function resolvePipeline(
  options: CommandPipelinesOptions,
  declared: Declared,
  report: (path: readonly string[], message: string, at?: 'key' | 'value') => void,
  queues: Map<string, string>,
): CommandPipelineSpec {
  const inputs = resolveInputs(declared.value['inputs']);
  const rawStages = Array.isArray(declared.value['stages']) ? declared.value['stages'] : [];
  const allStages = rawStages.map((s) => (isPlainObject(s) && typeof s['name'] === 'string' ? s['name'] : ''));
  const stages: CommandStageSpec[] = [];
  rawStages.forEach((raw, index) => {
    const path = [...declared.path, 'stages', String(index)];
    const name = allStages[index] ?? '';
    if (!isPlainObject(raw) || name === '') return;
    if (allStages.indexOf(name) !== index) report([...path, 'name'], `stage "${name}" is declared twice`);
    const c: StageFieldContext = {
      pipeline: declared.name,
      stage: name,
      path,
      baseDir: dirname(options.file.source),
      report: (p, message) => report(p, message),
      findProgram: options.findProgram,
    };
    const earlier: TemplateScope = { inputs: inputs && Object.keys(inputs), stages: allStages.slice(0, index), allStages };
    const withSelf: TemplateScope = { ...earlier, stages: allStages.slice(0, index + 1) };
    const prefix = path.join('.');
    const trusted = !options.pathsWithIssues.some((p) => p === prefix || p.startsWith(`${prefix}.`));
    stages.push(resolveStage(c, raw, options.worker, { earlier, withSelf, checkPolicy: trusted }));
    const queue = stages.at(-1)?.queue ?? queueName(declared.name, name);
    const owner = queues.get(queue);
    if (owner !== undefined) report([...path, raw['queue'] === undefined ? 'name' : 'queue'], `queue ${queue} is already the queue of stage ${owner}; every stage needs its own queue`);
    queues.set(queue, `${declared.name}.${name}`);
  });
  return {
    name: declared.name,
    version: typeof declared.value['version'] === 'number' ? declared.value['version'] : 1,
    inputs,
    stages,
    workDir: options.worker.workDir,
  };
}

function resolveStage(
  c: StageFieldContext,
  raw: Record<string, unknown>,
  worker: CommandPipelinesOptions['worker'],
  { earlier, withSelf, checkPolicy }: { earlier: TemplateScope; withSelf: TemplateScope; checkPolicy: boolean },
): CommandStageSpec {
  const shell = raw['shell'] === true;
  const env = resolveEnv(c, raw['env'], earlier);
  const cwd = typeof raw['cwd'] === 'string' ? raw['cwd'] : null;
  const common = { shell, env, cwd: cwd === null ? null : resolve(c.baseDir, cwd) };
  const run = resolveCommand(c, 'run', raw['run'], common, earlier);
  // A rollback also runs after its own stage (succeeded, or failed for good): it may name its outputs.
  const rollback = raw['rollback'] === undefined ? null : resolveCommand(c, 'rollback', raw['rollback'], common, withSelf);
  const policy = resolvePolicy(raw, worker);
  const resolved = mergeStagePolicy(DEFAULT_STAGE_POLICY, policy);
  if (checkPolicy) for (const [field, message] of checkStagePolicy(resolved)) c.report(c.path, `${field}: ${message} (resolved policy)`);
  const lockTtl = isPlainObject(worker.lock) ? worker.lock['ttl'] : undefined;
  return {
    name: c.stage,
    queue: typeof raw['queue'] === 'string' ? raw['queue'] : null,
    run: run ?? { argv: [], shell, env, cwd: null },
    rollback,
    policy,
    exitCodes: resolveExitCodes(raw['exitCodes']),
    cache: resolveCache(c, raw['cache'], earlier),
    lock: resolveLock(c, raw['lock'], earlier, lockTtl),
    publish: resolvePublish(c, raw['publish'], earlier),
    timeoutMs: resolved.timeoutMs,
  };
}
