/**
 * The stage plan: every registered pipeline's stages with their resolved policy, queue and job
 * specs, computed once at start. The worker loop and the commit path only look things up here.
 */
import { ConfigError, NotFoundError, type ConfigIssue } from '../core/errors.ts';
import type { PipelineDefinition, StageDefinition } from '../core/pipeline/define-pipeline.ts';
import { queueName } from '../core/pipeline/define-pipeline.ts';
import { checkStagePolicy, DEFAULT_LOCK_TTL_MS, DEFAULT_STAGE_POLICY, LOCK_KEY_ROOTS, mergeStagePolicy, type StagePolicy } from '../core/policy/stage-policy.ts';
import type { JobSpec } from '../core/ports/jobs.ts';
import { parseTemplate, type Template } from '../core/template.ts';
import type { PolicyOverrides } from './kiln-types.ts';

/** A stage's lock, resolved: its parsed key template and its TTL. */
export interface PlannedLock {
  key: Template;
  ttlMs: number;
}

/** One stage of one pipeline, resolved. */
export interface PlannedStage {
  pipeline: PipelineDefinition;
  definition: StageDefinition;
  index: number;
  queue: string;
  policy: StagePolicy;
  /** Spec of this stage's job. */
  job: JobSpec;
  /** Spec of this stage's rollback job, when it has a rollback handler. */
  rollbackJob: JobSpec | null;
  /** The stage's lock (taken by its jobs and its rollback jobs), or null. */
  lock: PlannedLock | null;
}

/** Lookups over all registered pipelines. */
export interface StagePlan {
  readonly pipelines: ReadonlyMap<string, PipelineDefinition>;
  /** Every queue, in pipeline then stage order. */
  readonly queues: readonly string[];
  byQueue(queue: string): PlannedStage | undefined;
  stages(pipeline: string): readonly PlannedStage[];
  stage(pipeline: string, stage: string): PlannedStage;
  /** The job after `stage` in its pipeline, or null when it is the last. */
  nextJob(pipeline: string, stage: string): JobSpec | null;
  /** The latest stage before index `beforeIndex` that has a rollback, as a rollback job spec. */
  rollbackBefore(pipeline: string, beforeIndex: number): JobSpec | null;
  /**
   * The first compensation to run when the stage at `index` fails for good: its own rollback when
   * it declares `rollbackOnFailure`, else that of the latest earlier stage with one.
   */
  rollbackAfterFailureOf(pipeline: string, index: number): JobSpec | null;
}

/** Options of {@link createStagePlan}. */
export interface StagePlanOptions {
  /** TTL of locks whose policy sets none (`worker.lock.ttl`). @default DEFAULT_LOCK_TTL_MS */
  lockTtlMs?: number;
}

/**
 * Resolves a stage's lock: parses its key and applies the default TTL, reporting a default TTL
 * too short for the stage (a bad key was reported by `checkStagePolicy`).
 */
function planLock(policy: StagePolicy, defaultTtlMs: number, report: (field: string, message: string) => void): PlannedLock | null {
  if (policy.lock === null) return null;
  const parsed = parseTemplate(policy.lock.key, LOCK_KEY_ROOTS);
  const ttlMs = policy.lock.ttlMs ?? defaultTtlMs;
  // An explicit TTL was checked with the policy; the default is checked here, against this stage.
  if (policy.lock.ttlMs === undefined && ttlMs <= policy.heartbeatMs) {
    report('lock.ttlMs', `the default lock TTL (worker.lock.ttl, ${ttlMs} ms) must be above heartbeatMs (${policy.heartbeatMs}); set lock.ttlMs for this stage`);
  }
  return parsed.ok ? { key: parsed.template, ttlMs } : null;
}

/** Resolves every pipeline's policies (defaults < definition < kiln.yaml) and checks them. */
export function createStagePlan(pipelines: readonly PipelineDefinition[], overrides: PolicyOverrides = {}, options: StagePlanOptions = {}): StagePlan {
  const lockTtlMs = options.lockTtlMs ?? DEFAULT_LOCK_TTL_MS;
  const byName = new Map<string, PipelineDefinition>();
  const byQueue = new Map<string, PlannedStage>();
  const byPipeline = new Map<string, PlannedStage[]>();
  const issues: ConfigIssue[] = [];
  for (const pipeline of pipelines) {
    if (byName.has(pipeline.name)) {
      issues.push({ source: 'pipelines', path: pipeline.name, message: 'pipeline registered twice' });
      continue;
    }
    byName.set(pipeline.name, pipeline);
    const planned = pipeline.stages.map((definition, index) => {
      const policy = mergeStagePolicy(
        DEFAULT_STAGE_POLICY,
        pipeline.defaults,
        definition.policy,
        overrides[pipeline.name]?.[definition.name],
      );
      const report = (field: string, message: string): void => {
        issues.push({ source: 'policy', path: `pipelines.${pipeline.name}.stages.${definition.name}.${field}`, message });
      };
      for (const [field, message] of checkStagePolicy(policy)) report(field, message);
      const lock = planLock(policy, lockTtlMs, report);
      if (policy.isolation === 'thread' && !definition.module) {
        issues.push({
          source: 'policy',
          path: `pipelines.${pipeline.name}.stages.${definition.name}.isolation`,
          message: 'thread isolation needs a stage defined with `module`, not an inline `handler`',
        });
      }
      const queue = definition.queue ?? queueName(pipeline.name, definition.name);
      const taken = byQueue.get(queue);
      if (taken) {
        issues.push({
          source: 'pipelines',
          path: `pipelines.${pipeline.name}.stages.${definition.name}.queue`,
          message: `queue ${queue} is already the queue of stage ${taken.pipeline.name}.${taken.definition.name}; every stage needs its own queue`,
        });
      }
      const base = { stage: definition.name, queue, maxAttempts: policy.maxAttempts, priority: policy.priority };
      const stage: PlannedStage = {
        pipeline,
        definition,
        index,
        queue,
        policy,
        job: { ...base, kind: 'stage' },
        rollbackJob: definition.rollback ? { ...base, kind: 'rollback' } : null,
        lock,
      };
      byQueue.set(queue, stage);
      return stage;
    });
    byPipeline.set(pipeline.name, planned);
  }
  if (issues.length > 0) throw new ConfigError(issues);

  const stages = (pipeline: string): readonly PlannedStage[] => {
    const found = byPipeline.get(pipeline);
    if (!found) throw new NotFoundError('pipeline', pipeline, { code: 'UNKNOWN_PIPELINE' });
    return found;
  };
  const rollbackBefore = (pipeline: string, beforeIndex: number): JobSpec | null => {
    const list = stages(pipeline);
    for (let i = Math.min(beforeIndex, list.length) - 1; i >= 0; i--) {
      const spec = list[i]?.rollbackJob;
      if (spec) return spec;
    }
    return null;
  };
  return {
    pipelines: byName,
    queues: [...byQueue.keys()],
    byQueue: (queue) => byQueue.get(queue),
    stages,
    stage(pipeline, stage) {
      const found = stages(pipeline).find((s) => s.definition.name === stage);
      if (!found) throw new NotFoundError('stage', `${pipeline}.${stage}`);
      return found;
    },
    nextJob(pipeline, stage) {
      const list = stages(pipeline);
      const i = list.findIndex((s) => s.definition.name === stage);
      return list[i + 1]?.job ?? null;
    },
    rollbackBefore,
    rollbackAfterFailureOf(pipeline, index) {
      const own = stages(pipeline)[index];
      if (own?.definition.rollbackOnFailure && own.rollbackJob) return own.rollbackJob;
      return rollbackBefore(pipeline, index);
    },
  };
}
