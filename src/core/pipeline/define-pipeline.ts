/**
 * Pipeline definitions: a name, a version and ordered stages, each with a handler and a policy.
 * `definePipeline` checks the shape once, at definition time, and returns a frozen definition.
 */
import { ValidationError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Job, JsonValue, Run } from '../model.ts';
import type { SingleFlightCache } from '../cache.ts';
import type { ArtifactStore } from '../ports/artifact-store.ts';
import type { PublicationRequest } from '../ports/publications.ts';
import type { StagePolicyOverrides } from '../policy/stage-policy.ts';

/** The lock a stage runs under (its `lock` policy): the rendered key and the fence it holds. */
export interface StageLock {
  key: string;
  /**
   * Greater than the fence of every earlier holder of any lock of this store. Pass it to external
   * systems that can refuse stale writers; kiln's own publications are fenced by it already.
   */
  fence: number;
}

/** What a stage handler receives. */
export interface StageContext {
  run: Run;
  job: Job;
  stage: string;
  /** 1-based attempt number of this claim. */
  attempt: number;
  /** The run's input. */
  input: JsonValue;
  /** Outputs of the run's earlier stages, by stage name. */
  outputs: Readonly<Record<string, JsonValue>>;
  /** Fires on timeout, cancel, superseded run or lost lease; `signal.reason` says which. */
  signal: AbortSignal;
  /**
   * Renews the lease (and the stage's lock) now; the worker also renews every `heartbeatMs`.
   * Throws `LeaseLostError` if either was lost.
   */
  heartbeat(): Promise<void>;
  /** The lock this attempt holds (the stage's `lock` policy), or null when the stage has none. */
  lock: StageLock | null;
  /** Records a progress marker; stored with the next heartbeat. */
  progress(marker: JsonValue): void;
  /** The pipeline's settings from kiln.yaml, as its `parseSettings` returned them (null without one). */
  settings: JsonValue;
  artifacts: ArtifactStore;
  /** The single-flight cache shared by every process on this store. */
  cache: SingleFlightCache;
  /**
   * Sets a publication when this attempt commits, in the same transaction and fenced by its
   * lease, by compare-and-set (never to an older version; see PublicationRequest). Nothing is
   * published if the attempt fails or its commit is refused.
   */
  publish(publication: PublicationRequest): void;
  /** Bound to pipeline, run_id, stage, job_id, attempt, trace_id. */
  logger: Logger;
}

/** An inline stage handler. Its return value (JSON) becomes the stage output. */
export type StageHandler = (ctx: StageContext) => Promise<JsonValue> | JsonValue;

/** What a thread-isolated handler receives (plain data: it runs in another thread). */
export interface ThreadStageInput {
  runId: string;
  jobId: string;
  stage: string;
  attempt: number;
  input: JsonValue;
  outputs: Record<string, JsonValue>;
  /** The lock this attempt holds, or null (see {@link StageContext.lock}). */
  lock: StageLock | null;
}

/** A handler in its own module, so it can run in a worker thread. Its export takes {@link ThreadStageInput}. */
export interface StageModule {
  /** Module URL (`new URL('./stages/x.ts', import.meta.url)`) or absolute path. */
  url: URL | string;
  /** Export name; default `default`. */
  export?: string;
}

/** One stage as written by a pipeline author. Give `handler` (inline only) or `module` (inline or thread). */
export interface StageDefinition {
  name: string;
  handler?: StageHandler;
  module?: StageModule;
  /**
   * Compensation, run as its own idempotent job when the run fails for good (dead-lettered or
   * failed) after this stage succeeded; compensations run in reverse stage order.
   */
  rollback?: StageHandler;
  /**
   * Also run this stage's own `rollback` when the stage itself fails for good (before those of the
   * earlier stages): for stages that may leave a partial effect behind, such as an external
   * command. The compensation must then cope with a stage that did nothing. @default false
   */
  rollbackOnFailure?: boolean;
  /** The queue of this stage's jobs; default `<pipeline>.<stage>` (see {@link queueName}). Unique across pipelines. */
  queue?: string;
  policy?: StagePolicyOverrides;
}

/** A pipeline as written by its author. */
export interface PipelineDefinitionInput {
  name: string;
  version: number;
  stages: StageDefinition[];
  /** Validates and normalises a run's input; throws `ValidationError` on bad input. */
  parseInput?: (input: unknown) => JsonValue;
  /** Policy applied to every stage before the stage's own. */
  defaults?: StagePolicyOverrides;
  /**
   * Validates the pipeline's own settings (`pipelines.<name>.settings` in kiln.yaml; `undefined`
   * when absent) and returns them with defaults filled in; throws `ValidationError` on bad
   * settings (start-up then fails with a config error naming the file and line). Stages read the
   * result as `ctx.settings`, routes as `kiln.settingsOf(name)`. Without it, settings must be absent.
   */
  parseSettings?: (raw: unknown) => JsonValue;
}

/** A checked, frozen pipeline definition. */
export type PipelineDefinition = Readonly<Omit<PipelineDefinitionInput, 'stages'>> & { readonly stages: readonly StageDefinition[] };

/** Pipeline names: lower case, dot-separated words (`demo.sleep`). */
export const PIPELINE_NAME = /^[a-z][a-z0-9_-]*(\.[a-z0-9_-]+)*$/;
/** Stage names: one lower-case word. */
export const STAGE_NAME = /^[a-z][a-z0-9_-]*$/;
/** Queue names: like pipeline names, dots allowed anywhere after the first character. */
export const QUEUE_NAME = /^[a-z0-9][a-z0-9._-]{0,199}$/;

/** Defines a pipeline. Throws `ValidationError` naming every problem with the definition. */
export function definePipeline(def: PipelineDefinitionInput): PipelineDefinition {
  const problems: string[] = [];
  if (!PIPELINE_NAME.test(def.name)) problems.push(`name "${def.name}" must match ${PIPELINE_NAME}`);
  if (!Number.isInteger(def.version) || def.version < 1) problems.push('version must be a positive integer');
  if (def.stages.length === 0) problems.push('at least one stage is required');
  const seen = new Set<string>();
  for (const stage of def.stages) {
    if (!STAGE_NAME.test(stage.name)) problems.push(`stage name "${stage.name}" must match ${STAGE_NAME}`);
    if (seen.has(stage.name)) problems.push(`stage "${stage.name}" is defined twice`);
    seen.add(stage.name);
    if (!stage.handler === !stage.module) problems.push(`stage "${stage.name}" needs exactly one of handler or module`);
    if (stage.queue !== undefined && !QUEUE_NAME.test(stage.queue)) problems.push(`queue "${stage.queue}" of stage "${stage.name}" must match ${QUEUE_NAME}`);
  }
  if (problems.length > 0) {
    throw new ValidationError(`pipeline ${def.name}: ${problems.join('; ')}`, {
      code: 'VALIDATION_FAILED',
      details: { problems },
    });
  }
  return Object.freeze({ ...def, stages: Object.freeze(def.stages.map((s) => Object.freeze({ ...s }))) });
}

/** The queue a stage's jobs go to. */
export function queueName(pipeline: string, stage: string): string {
  return `${pipeline}.${stage}`;
}
