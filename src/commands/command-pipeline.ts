/**
 * `createCommandPipeline(spec)`: a pipeline declared in kiln.yaml as an ordinary pipeline
 * definition, so the engine runs it like any other (leases, retries, exactly-once commits,
 * compensations). Each stage's handler runs its command (command-stage.ts), through the
 * single-flight cache when the stage declares `cache`, and asks for its `publish` entries in its
 * commit; each `rollback` is a compensation that also runs when its own stage fails for good (a
 * command may have done part of its work).
 */
import { contentHash } from '../core/canonical.ts';
import { StageFailure } from '../core/errors.ts';
import { tenantSubject } from '../core/tenant-keys.ts';
import type { JsonValue } from '../core/model.ts';
import { definePipeline, type PipelineDefinition, type StageContext, type StageDefinition } from '../core/pipeline/define-pipeline.ts';
import type { StagePolicyOverrides } from '../core/policy/stage-policy.ts';
import type { PublicationRequest } from '../core/ports/publications.ts';
import { commandOutputOf, type CommandStageOutput } from './attempt-dir.ts';
import { parseCommandInput } from './command-input.ts';
import type { CommandPipelineSpec, CommandPublishSpec, CommandStageSpec } from './command-spec.ts';
import { renderText, runCommandAttempt, templateResolver } from './command-stage.ts';
import { parseRef, type TemplateRef } from './templates.ts';

/** Waiters for another worker's cached build give up this long after the command's own timeout. */
const CACHE_WAIT_SLACK_MS = 5_000;

/**
 * The stage's policy for the engine: its declared policy, plus its `lock` (the key a template such
 * as `render:{{input.assetId}}`; without a TTL of its own the worker's `worker.lock.ttl` applies).
 */
function stagePolicy(stage: CommandStageSpec): StagePolicyOverrides {
  if (!stage.lock) return { ...stage.policy };
  const lock = { key: stage.lock.key, ...(stage.lock.ttlMs === null ? {} : { ttlMs: stage.lock.ttlMs }) };
  return { ...stage.policy, lock };
}

/** The value of a reference as JSON, for cache keys: artifacts by their content ref, not a local path. */
function keyValue(ctx: StageContext, ref: TemplateRef): JsonValue {
  switch (ref.kind) {
    case 'input': {
      let node: JsonValue | undefined = ctx.input;
      for (const key of ref.path) node = typeof node === 'object' && node !== null && !Array.isArray(node) ? node[key] : undefined;
      return node ?? null;
    }
    case 'output':
      return commandOutputOf(ctx.outputs[ref.stage])?.outputs[ref.key] ?? null;
    case 'artifact':
      return commandOutputOf(ctx.outputs[ref.stage])?.artifacts[ref.file]?.ref ?? null;
    case 'run':
      return ctx.run[ref.field];
  }
}

/**
 * The cache key of a stage: what it runs (argv, environment, directory) and the values it depends
 * on (the listed references, or else the whole input and every earlier stage's output), hashed.
 */
function cacheKey(spec: CommandPipelineSpec, stage: CommandStageSpec, ctx: StageContext): string {
  const listed = stage.cache?.key;
  const values: JsonValue = listed
    ? Object.fromEntries(listed.map((expression) => {
        const ref = parseRef(expression);
        return [expression, typeof ref === 'string' ? null : keyValue(ctx, ref)];
      }))
    : { input: ctx.input, stages: { ...ctx.outputs } };
  const { argv, shell, env, cwd } = stage.run;
  return contentHash({ pipeline: spec.name, version: spec.version, stage: stage.name, command: { argv: [...argv], shell, env: { ...env }, cwd }, values });
}

/** Runs the stage's command, or takes its output from the cache (a build runs the command once for every worker). */
async function stageOutput(spec: CommandPipelineSpec, stage: CommandStageSpec, ctx: StageContext): Promise<CommandStageOutput> {
  const attempt = { pipeline: spec, stage, kind: 'stage' as const, ctx };
  const cache = stage.cache;
  if (!cache) return runCommandAttempt({ ...attempt, signal: ctx.signal });
  const { value } = await ctx.cache.getOrBuild(
    {
      cache: `${spec.name}.${stage.name}`,
      key: cacheKey(spec, stage, ctx),
      ttlMs: cache.ttlMs,
      staleMs: cache.staleMs,
      waitTimeoutMs: stage.timeoutMs + CACHE_WAIT_SLACK_MS,
      signal: ctx.signal,
      ...(cache.local === null ? {} : { local: { name: cache.local } }),
    },
    async (build) => (await runCommandAttempt({ ...attempt, signal: build.signal })) as unknown as JsonValue,
  );
  const output = commandOutputOf(value);
  if (!output) throw StageFailure.retryable(`cache entry of stage ${stage.name} is not a command stage output`);
  return output;
}

/** The publication a `publish` entry asks for, from the stage's output. */
function publication(spec: CommandPipelineSpec, stage: CommandStageSpec, ctx: StageContext, output: CommandStageOutput, entry: CommandPublishSpec): PublicationRequest {
  const artifact = output.artifacts[entry.file];
  if (!artifact) {
    throw StageFailure.permanent(`stage ${stage.name} publishes ${entry.file}, but its command left no such file in KILN_OUTPUT_DIR`, { code: 'COMMAND_FAILED' });
  }
  const resolve = templateResolver({ pipeline: spec, stage, kind: 'stage', ctx }, (s, file) => commandOutputOf(ctx.outputs[s])?.artifacts[file]?.ref);
  // A rendered subject (from the input, say) stays within the run's tenant: it never names another tenant's.
  const subjectId = entry.subject === null ? ctx.run.subjectId : tenantSubject(ctx.run.tenant, renderText(entry.subject, resolve));
  if (!subjectId) {
    throw StageFailure.permanent(`stage ${stage.name} publishes ${entry.file} without a subject: set publish.subject or submit the run with a subject id`, { code: 'COMMAND_FAILED' });
  }
  return { subjectId, profile: entry.profile, artifactRef: artifact.ref, subjectVersion: ctx.run.subjectVersion ?? 1 };
}

function stageDefinition(spec: CommandPipelineSpec, stage: CommandStageSpec): StageDefinition {
  const definition: StageDefinition = {
    name: stage.name,
    async handler(ctx) {
      const output = await stageOutput(spec, stage, ctx);
      for (const entry of stage.publish) ctx.publish(publication(spec, stage, ctx, output, entry));
      return output as unknown as JsonValue;
    },
    policy: stagePolicy(stage),
  };
  if (stage.queue !== null) definition.queue = stage.queue;
  if (stage.rollback) {
    definition.rollback = async (ctx) => {
      await runCommandAttempt({ pipeline: spec, stage, kind: 'rollback', ctx, signal: ctx.signal });
      return null;
    };
    definition.rollbackOnFailure = true;
  }
  return definition;
}

/** The pipeline definition of a pipeline declared in kiln.yaml. */
export function createCommandPipeline(spec: CommandPipelineSpec): PipelineDefinition {
  return definePipeline({
    name: spec.name,
    version: spec.version,
    parseInput: (raw) => parseCommandInput(spec.name, spec.inputs, raw),
    stages: spec.stages.map((stage) => stageDefinition(spec, stage)),
  });
}
