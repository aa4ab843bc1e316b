/**
 * A stage's lock (its `lock` policy) around one job: the key rendered from the run, taken before
 * the handler runs, renewed with the job's heartbeat (the lease keeper) and released after the
 * commit. A job whose lock is held is handed back with a delay and a lock wait
 * (`jobs.release`): its attempt is not counted, it never runs beside the holder, and it is
 * claimable again after a backoff with jitter (`lockWaitDelayMs`).
 */
import { StageFailure } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { JsonValue } from '../core/model.ts';
import { lockWaitDelayMs } from '../core/policy/retry.ts';
import type { ClaimedJob } from '../core/ports/jobs.ts';
import type { Lock } from '../core/ports/locks.ts';
import { renderTemplate } from '../core/template.ts';
import type { HeldJob, HeldLock, LeaseKeeper } from './lease-keeper.ts';
import type { PlannedLock, PlannedStage } from './stage-plan.ts';
import type { WorkerDeps } from './worker-deps.ts';

/** What taking a stage lock needs: the engine's parts, the worker's name (the lock owner) and its lease keeper. */
export type StageLockDeps = Pick<WorkerDeps, 'store' | 'observer' | 'clock' | 'random'> & { workerId: string; leases: Pick<LeaseKeeper, 'release'> };

/** A lock a job holds while its handler runs and its outcome commits. */
export interface TakenLock extends HeldLock {
  fence: number;
}

/** Outcome of {@link takeStageLock}. */
export type TakeLockResult =
  /** The job holds the lock: run the handler (the keeper renews the lock with the lease). */
  | { status: 'acquired'; lock: TakenLock }
  /** The job was handed back (the lock is held, or the store could not be asked): nothing more to do. */
  | { status: 'handed_back' }
  /** The key cannot be rendered for this run: the attempt fails with this permanent error. */
  | { status: 'unresolved'; error: StageFailure };

/** What a lock key may refer to (`LOCK_KEY_ROOTS`): the run's input, a few run fields, earlier stages' outputs. */
function keyScope(claimed: ClaimedJob): Record<string, JsonValue> {
  const { run, outputs } = claimed;
  return {
    input: run.input,
    run: { id: run.id, pipeline: run.pipeline, subjectId: run.subjectId, subjectVersion: run.subjectVersion, tenant: run.tenant },
    stage: Object.fromEntries(Object.entries(outputs).map(([name, output]) => [name, { outputs: output }])),
  };
}

/** The lock key of `claimed`'s job, or the permanent error that says why it has none. */
export function renderLockKey(lock: PlannedLock, claimed: ClaimedJob): { ok: true; key: string } | { ok: false; error: StageFailure } {
  const rendered = renderTemplate(lock.key, keyScope(claimed));
  if (rendered.ok) return { ok: true, key: rendered.text };
  return { ok: false, error: StageFailure.permanent(`lock key: ${rendered.problem}`, { code: 'LOCK_KEY_UNRESOLVED' }) };
}

/**
 * Hands the job back unworked, ready after `delayMs`, its heartbeats stopped first. A store that
 * cannot take it back leaves the lease to expire (the job is redelivered then).
 */
async function handBack(deps: StageLockDeps, held: HeldJob, delayMs: number, lockWait: boolean, logger: Logger): Promise<void> {
  deps.leases.release(held);
  await deps.store.jobs.release([{ ...held.lease, delayMs, lockWait }]).catch((err: unknown) => {
    logger.warn({ err }, 'could not hand the job back; its lease will expire');
  });
}

/** How long the job should wait for `holder`'s lock, by how long it has waited already. */
function waitDelayMs(deps: StageLockDeps, claimed: ClaimedJob, holder: Lock): number {
  const now = deps.clock.now();
  return lockWaitDelayMs(now - (claimed.job.lockWaitSince ?? now), holder.expiresAt - now, deps.random);
}

/**
 * Takes the stage's lock for the job held as `held`, owned by this worker under the job's lease
 * token (a retried acquire of the same claim is the same owner). On success the lock rides the
 * job's heartbeat (`held.lock`) and its wait is reported; when the lock is held, the wait is
 * reported and the job handed back to try again later.
 */
export async function takeStageLock(
  deps: StageLockDeps,
  stage: PlannedStage & { lock: PlannedLock },
  claimed: ClaimedJob,
  held: HeldJob,
  logger: Logger,
): Promise<TakeLockResult> {
  const rendered = renderLockKey(stage.lock, claimed);
  if (!rendered.ok) return { status: 'unresolved', error: rendered.error };
  const { key } = rendered;
  const { ttlMs } = stage.lock;
  const token = held.lease.token;
  const pipeline = stage.pipeline.name;
  let result;
  try {
    result = await deps.store.locks.acquire({ key, owner: deps.workerId, token, ttlMs });
  } catch (err) {
    logger.warn({ err, lock: key }, 'could not take the stage lock; handing the job back');
    // The acquire may have landed with its answer lost: let go of it, best effort.
    void deps.store.locks.release(key, token).catch(() => {});
    await handBack(deps, held, lockWaitDelayMs(0, 0, deps.random), false, logger);
    return { status: 'handed_back' };
  }
  if (result.status === 'held') {
    const delayMs = waitDelayMs(deps, claimed, result.holder);
    deps.observer.lockWaited(pipeline, stage.definition.name);
    logger.debug({ lock: key, holder: result.holder.owner, holder_fence: result.holder.fence, delay_ms: delayMs }, 'stage lock held; waiting');
    await handBack(deps, held, delayMs, true, logger);
    return { status: 'handed_back' };
  }
  const { lock } = result;
  deps.observer.lockAcquired(pipeline, stage.definition.name, lock.acquiredAt - (claimed.job.lockWaitSince ?? lock.acquiredAt));
  const taken: TakenLock = { key, token, ttlMs, fence: lock.fence };
  held.lock = { key, token, ttlMs };
  return { status: 'acquired', lock: taken };
}

/** Lets go of the lock after the job's outcome committed (or was refused); a failure only delays the next holder by the TTL. */
export async function releaseStageLock(deps: StageLockDeps, held: HeldJob, lock: TakenLock, logger: Logger): Promise<void> {
  held.lock = undefined;
  const status = await deps.store.locks.release(lock.key, lock.token).catch((err: unknown) => {
    logger.warn({ err, lock: lock.key }, 'could not release the stage lock; it expires after its TTL');
    return 'failed' as const;
  });
  if (status === 'not_owner') logger.warn({ lock: lock.key, fence: lock.fence }, 'stage lock was no longer ours at release');
}
