/**
 * The pipelines the simulation submits: a handful of linear pipelines of a few stages, some with
 * compensations, and the engine's rules for what comes after a job (the next stage, the
 * compensation to start, the failure decision), so the commits the simulated workers send are
 * the ones a real worker would send.
 */
import { ErrorClass } from '../../../src/core/errors.ts';
import type { Job } from '../../../src/core/model.ts';
import { decideFailure, decideRollbackFailure } from '../../../src/core/policy/retry.ts';
import { DEFAULT_STAGE_POLICY, mergeStagePolicy, type StagePolicy } from '../../../src/core/policy/stage-policy.ts';
import type { FailureDecision, JobSpec } from '../../../src/core/ports/jobs.ts';
import type { Prng } from './prng.ts';

/** One stage of a simulated pipeline. */
interface SimStage {
  name: string;
  /** It has a compensation (a rollback job). */
  rollback: boolean;
  maxAttempts: number;
  priority: number;
}

/** A simulated pipeline: its stages in order. */
export interface SimPipeline {
  name: string;
  stages: readonly SimStage[];
}

const stage = (name: string, maxAttempts: number, rollback = false, priority = 0): SimStage => ({ name, rollback, maxAttempts, priority });

/** Every pipeline a schedule may submit. */
export const SIM_PIPELINES: readonly SimPipeline[] = [
  { name: 'sim.render', stages: [stage('fetch', 3, true), stage('render', 2, true), stage('publish', 3)] },
  { name: 'sim.quick', stages: [stage('only', 2, false, 1)] },
  { name: 'sim.chain', stages: [stage('a', 2), stage('b', 3, true, 2), stage('c', 1), stage('d', 2, true)] },
];

/** Every queue of every simulated pipeline (`<pipeline>.<stage>`; rollbacks share their stage's queue). */
export const SIM_QUEUES: readonly string[] = SIM_PIPELINES.flatMap((p) => p.stages.map((s) => `${p.name}.${s.name}`));

function pipelineOf(name: string): SimPipeline {
  const found = SIM_PIPELINES.find((p) => p.name === name);
  if (!found) throw new Error(`unknown simulated pipeline ${name}`);
  return found;
}

function specOf(pipeline: SimPipeline, index: number, kind: JobSpec['kind']): JobSpec {
  const s = pipeline.stages[index];
  if (!s) throw new Error(`no stage ${index} in ${pipeline.name}`);
  return { stage: s.name, queue: `${pipeline.name}.${s.name}`, kind, maxAttempts: s.maxAttempts, priority: s.priority };
}

/** The first job of a run of `pipeline`. */
export function firstJob(pipeline: SimPipeline): JobSpec {
  return specOf(pipeline, 0, 'stage');
}

/** The compensation of the latest stage before `index` that has one (the engine's `rollbackBefore`). */
function rollbackBefore(pipeline: SimPipeline, index: number): JobSpec | null {
  for (let i = index - 1; i >= 0; i--) if (pipeline.stages[i]?.rollback) return specOf(pipeline, i, 'rollback');
  return null;
}

function indexOf(pipeline: SimPipeline, job: Pick<Job, 'stage'>): number {
  return pipeline.stages.findIndex((s) => s.name === job.stage);
}

/** What a completed job enqueues: the next stage, or (for a compensation) the one before it. */
export function nextAfter(job: Pick<Job, 'pipeline' | 'stage' | 'kind'>): JobSpec | null {
  const pipeline = pipelineOf(job.pipeline);
  const index = indexOf(pipeline, job);
  if (job.kind === 'rollback') return rollbackBefore(pipeline, index);
  return index + 1 < pipeline.stages.length ? specOf(pipeline, index + 1, 'stage') : null;
}

/** Retry backoff of every simulated stage: short, so retries come due within a schedule. */
export const SIM_BACKOFF = Object.freeze({ baseMs: 500, capMs: 4_000 });

function policyOf(job: Pick<Job, 'maxAttempts'>): StagePolicy {
  return mergeStagePolicy(DEFAULT_STAGE_POLICY, { maxAttempts: job.maxAttempts, interventionAttempts: 2, backoff: SIM_BACKOFF });
}

/** A failed attempt as the engine decides it (`decideFailure`, `decideRollbackFailure`), for an error of a random class. */
export function failureDecision(job: Pick<Job, 'pipeline' | 'stage' | 'kind' | 'attempt' | 'maxAttempts'>, prng: Prng): { decision: FailureDecision; errorClass: ErrorClass } {
  const errorClass = prng.pick([ErrorClass.transient, ErrorClass.transient, ErrorClass.transient, ErrorClass.intervention, ErrorClass.permanent]);
  const failure = { error: { class: errorClass, code: 'SIM_FAILED', message: 'simulated failure' }, attempt: job.attempt, policy: policyOf(job), random: prng.next };
  if (job.kind === 'rollback') return { decision: decideRollbackFailure(failure), errorClass };
  const pipeline = pipelineOf(job.pipeline);
  return { decision: decideFailure({ ...failure, rollback: rollbackBefore(pipeline, indexOf(pipeline, job)) }), errorClass };
}

/**
 * The decision for a job claimed `exhausted` (it kept losing its lease): dead-letter a stage job
 * (with its compensation), park a compensation; the handler does not run (as `execute-job.ts`).
 */
export function exhaustedDecision(job: Pick<Job, 'pipeline' | 'stage' | 'kind'>): FailureDecision {
  if (job.kind === 'rollback') return { action: 'park' };
  const pipeline = pipelineOf(job.pipeline);
  return { action: 'dead_letter', rollback: rollbackBefore(pipeline, indexOf(pipeline, job)) };
}
