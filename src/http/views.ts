/**
 * JSON views of domain records as the API answers them. The store keeps epoch milliseconds; the
 * API speaks ISO-8601 strings (UTC), and never exposes a lease token (it is a write capability).
 */
import type { Job, JsonValue, QueueStats, Run, StageErrorRecord, StageRecord } from '../core/model.ts';
import type { RunDetail } from '../core/ports/reads.ts';
import type { VerifyReport } from '../engine/verify/verify-types.ts';

/** An epoch-ms time as ISO-8601, keeping `null`. */
export function isoTime(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** A run as the API shows it: the record with ISO-8601 times. */
export type RunView = Omit<Run, 'createdAt' | 'updatedAt' | 'finishedAt'> & {
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
};

/** One entry of a run's stage timeline. */
export interface StageView {
  stage: string;
  index: number;
  status: StageRecord['status'];
  attempts: number;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  error: StageErrorRecord | null;
  progress: JsonValue | null;
  output: JsonValue | null;
  rollbackStatus: StageRecord['rollbackStatus'];
  leaseOwner: string | null;
  leaseUntil: string | null;
}

/** A run with its stage timeline in pipeline order. */
export interface RunDetailView extends RunView {
  stages: StageView[];
}

/** A queue's depth and age; `inFlight` counts leased jobs. */
export interface QueueView {
  queue: string;
  paused: boolean;
  ready: number;
  scheduled: number;
  inFlight: number;
  parked: number;
  dead: number;
  oldestReadyAgeMs: number;
}

/** A job as the API shows it (without its lease token). */
export type JobView = Omit<Job, 'leaseToken' | 'availableAt' | 'enqueuedAt' | 'leaseUntil' | 'lockWaitSince'> & {
  availableAt: string;
  enqueuedAt: string;
  leaseUntil: string | null;
  lockWaitSince: string | null;
};

/** Converts a run. */
export function runView(run: Run): RunView {
  return {
    ...run,
    createdAt: new Date(run.createdAt).toISOString(),
    updatedAt: new Date(run.updatedAt).toISOString(),
    finishedAt: isoTime(run.finishedAt),
  };
}

/** Converts a stage record. */
export function stageView(stage: StageRecord): StageView {
  return {
    stage: stage.stage,
    index: stage.index,
    status: stage.status,
    attempts: stage.attempts,
    startedAt: isoTime(stage.startedAt),
    finishedAt: isoTime(stage.finishedAt),
    durationMs: stage.durationMs,
    error: stage.error,
    progress: stage.progress,
    output: stage.output,
    rollbackStatus: stage.rollbackStatus,
    leaseOwner: stage.leaseOwner,
    leaseUntil: isoTime(stage.leaseUntil),
  };
}

/** Converts a run with its stage records. */
export function runDetailView(detail: RunDetail): RunDetailView {
  return { ...runView(detail.run), stages: detail.stages.map(stageView) };
}

/** Converts a job, dropping its lease token. */
export function jobView(job: Job): JobView {
  const { leaseToken: _secret, availableAt, enqueuedAt, leaseUntil, lockWaitSince, ...rest } = job;
  return {
    ...rest,
    availableAt: new Date(availableAt).toISOString(),
    enqueuedAt: new Date(enqueuedAt).toISOString(),
    leaseUntil: isoTime(leaseUntil),
    lockWaitSince: isoTime(lockWaitSince),
  };
}

/** Converts queue stats (`leased` is shown as `inFlight`). */
export function queueView(stats: QueueStats): QueueView {
  return {
    queue: stats.queue,
    paused: stats.paused,
    ready: stats.ready,
    scheduled: stats.scheduled,
    inFlight: stats.leased,
    parked: stats.parked,
    dead: stats.dead,
    oldestReadyAgeMs: stats.oldestReadyAgeMs,
  };
}

/** An invariant audit as the API (and `kiln verify --json`) shows it: `startedAt` as ISO-8601. */
export type VerifyReportView = Omit<VerifyReport, 'startedAt'> & { startedAt: string };

/** Converts an audit report. */
export function verifyReportView(report: VerifyReport): VerifyReportView {
  return { ...report, startedAt: new Date(report.startedAt).toISOString() };
}
