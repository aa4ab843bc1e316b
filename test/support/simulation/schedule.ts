/**
 * One schedule of the worker-protocol simulation: a seed drives several simulated workers and an
 * operator against one memory store on a fake clock, one protocol step at a time, and every
 * invariant (invariants.ts) is checked after every step. Then a drain phase (no crashes: time
 * moves on, everything held is completed, everything left is claimed and completed, parked runs
 * resumed, dead letters replayed) must end every run. The steps call the store's ports exactly
 * as workers do (submit, claim, renew, commit, release, reap; the operator's cancel, replay,
 * resume, pause, drain), with the decisions the engine would take (pipelines.ts); stale holders
 * (workers whose lease ran out, crashed workers coming back) keep committing with old tokens,
 * which the fence must refuse.
 *
 * Everything random comes from the seed's PRNG, and ids and tokens from counters, so one seed is
 * one schedule: a failure names its seed and step and replays exactly.
 */
import { ConflictError } from '../../../src/core/errors.ts';
import { createFakeClock, type FakeClock } from '../../../src/core/clock.ts';
import type { Job, JsonValue, RunStatus } from '../../../src/core/model.ts';
import type { CommitItem, LeaseRef, SubmitRunRequest } from '../../../src/core/ports/jobs.ts';
import type { Store } from '../../../src/core/ports/store.ts';
import { isTerminal } from '../../../src/core/run/transitions.ts';
import type { MemoryContext } from '../../../src/stores/memory/context.ts';
import type { MemoryState } from '../../../src/stores/memory/state.ts';
import { assertUnchanged, auditedStore, auditStore, Invariant, InvariantViolation, LeaseModel, StateWatch, stateDigest } from './invariants.ts';
import { exhaustedDecision, failureDecision, firstJob, nextAfter, SIM_BACKOFF, SIM_PIPELINES, SIM_QUEUES } from './pipelines.ts';
import { createCountingIds, createPrng, type Prng } from './prng.ts';
import { openSimStore, type StoreVariant } from './variants.ts';

/** The reaper's period: whenever the clock has moved this far since the last reap, the reaper runs. It is also the audit's lease grace. */
const REAP_MS = 4_000;
/** Leases granted by claims: all short, so they expire often. */
const LEASE_MS = [1_000, 2_500, 5_000] as const;
/** Rounds of the drain phase before a run still going counts as stuck (and claim-and-complete cycles per round). */
const DRAIN_ROUNDS = 40;
/** Actions kept for a failure message. */
const TRACE_LENGTH = 16;

/** How one schedule is drawn. */
export interface ScheduleOptions {
  seed: number;
  variant?: StoreVariant;
  /** Steps of the random phase. @default 20 to 50, drawn from the seed */
  steps?: number;
}

/** What a schedule did (it passed). */
export interface ScheduleResult {
  seed: number;
  /** Steps, both phases. */
  steps: number;
  runs: number;
  /** Store calls per action name, and tallies of results (commits and heartbeats refused by the fence, redeliveries). */
  actions: Record<string, number>;
}

/** A schedule that broke an invariant: the seed and step to replay it, and the actions before it. */
export class SimulationFailure extends Error {
  readonly seed: number;
  readonly step: number;
  readonly invariant: string;
  readonly detail: string;
  readonly trace: readonly string[];
  constructor(seed: number, variant: StoreVariant, step: number, invariant: string, detail: string, trace: readonly string[]) {
    super(
      `simulation seed ${seed} (store ${variant}) broke ${invariant} at step ${step}: ${detail}\n` +
        `  replay: ${variant === 'correct' ? '' : `SIM_VARIANT=${variant} `}SIM_SEED=${seed} npm run sim\n` +
        `  last actions:\n${trace.map((line) => `    ${line}`).join('\n')}`,
    );
    this.seed = seed;
    this.step = step;
    this.invariant = invariant;
    this.detail = detail;
    this.trace = trace;
  }
}

/** A lease a simulated worker holds (or a crashed one held), with what it knows of the job. */
interface Held {
  lease: LeaseRef;
  job: Job;
  exhausted: boolean;
  ledgerOutput?: JsonValue;
}

interface SimWorker {
  id: string;
  held: Held[];
}

/** One schedule's world: the store, the clock, the workers, the oracle. */
class Simulation {
  private readonly prng: Prng;
  private readonly clock: FakeClock;
  private readonly store: Store;
  /** The store `kiln verify` reads (see `auditedStore`). */
  private readonly audited: Store;
  private readonly state: MemoryState;
  private readonly model = new LeaseModel();
  private readonly watch = new StateWatch();
  private readonly workers: SimWorker[] = [];
  /** Leases of crashed workers: the zombies that come back and commit with them. */
  private readonly stale: Held[] = [];
  /** Leases of crashed workers that must be redelivered once expired. */
  private crashed: { jobId: string; token: string }[] = [];
  private readonly paused = new Set<string>();
  private readonly subjectVersions = new Map<string, number>();
  /** `<pipeline>\0<idempotency key>` -> the input checksum of the run holding it. */
  private readonly keyChecksums = new Map<string, string>();
  private readonly trace: { step: number; at: number; text: string | (() => string) }[] = [];
  readonly actions: Record<string, number> = {};
  private workerSerial = 0;
  private changeCount = 0;
  private lastReap: number;
  step = 0;

  constructor(prng: Prng, clock: FakeClock, store: Store, ctx: MemoryContext) {
    this.prng = prng;
    this.clock = clock;
    this.store = store;
    this.audited = auditedStore(store, ctx);
    this.state = ctx.state;
    this.lastReap = clock.now();
    const count = prng.between(2, 4);
    for (let i = 0; i < count; i++) this.workers.push(this.newWorker());
  }

  /** The last actions, for a failure message. */
  get recentActions(): string[] {
    return this.trace.map(({ step, at, text }) => `#${step} t=${at} ${typeof text === 'string' ? text : text()}`);
  }

  get runCount(): number {
    return this.state.runs.size;
  }

  private newWorker(): SimWorker {
    return { id: `w${this.workerSerial++}`, held: [] };
  }

  /** Adds `n` to a tally of the result (see {@link ScheduleResult.actions}). */
  private count(name: string, n: number): void {
    if (n > 0) this.actions[name] = (this.actions[name] ?? 0) + n;
  }

  /** Records an action for the trace; `changed`: it may have changed the store (a refused call is checked unchanged where it is made). */
  private note(action: string, text: string | (() => string), changed = true): void {
    if (changed) this.changeCount += 1;
    this.actions[action] = (this.actions[action] ?? 0) + 1;
    // Rendered only if a failure prints it (most schedules pass: describing every call would cost more than checking it).
    this.trace.push({ step: this.step, at: this.clock.now() - START_MS, text });
    if (this.trace.length > TRACE_LENGTH) this.trace.shift();
  }

  /** Store calls so far that may have changed it: a step that made none has nothing new for `kiln verify`. */
  get changes(): number {
    return this.changeCount;
  }

  /**
   * The checks after a step (the oracle's ran with each call): if the step may have changed the
   * store (`changed`), the state watch, and `kiln verify`'s store checks as `audit` says; always,
   * the crashed workers' leases (they depend on time alone).
   */
  async check(changed: boolean, audit: Audit): Promise<void> {
    if (changed) {
      this.model.forgetEnded(this.state);
      this.watch.check(this.state);
    }
    this.checkCrashedLeases();
    if (audit === 'always' || (audit === 'changed' && changed)) await auditStore(this.audited, this.clock, REAP_MS);
  }

  /** A crashed worker's leases are handed out again once they expire and the reaper passed. */
  private checkCrashedLeases(): void {
    const now = this.clock.now();
    this.crashed = this.crashed.filter(({ jobId, token }) => {
      const job = this.state.jobs.get(jobId);
      if (!job || job.leaseToken !== token) return false;
      if ((job.leaseUntil ?? 0) + REAP_MS < now) {
        throw new InvariantViolation(Invariant.CRASHED_LEASE_NOT_REDELIVERED, `job ${jobId} still carries lease ${token} of a crashed worker, expired at ${job.leaseUntil} (now ${now})`);
      }
      return true;
    });
  }

  // ---- the random phase -------------------------------------------------------------------

  /** One random step. */
  async randomStep(): Promise<void> {
    const actions: [number, () => Promise<void>][] = [
      [14, () => this.submit()],
      [18, () => this.claim(this.prng.pick(this.workers))],
      [8, () => this.renew()],
      [12, () => this.advance(this.prng.chance(0.15) ? this.prng.between(3_000, 8_000) : this.prng.between(1, 1_500))],
      [22, () => this.commitSome()],
      [3, () => this.release()],
      [3, () => this.reap()],
      [2, () => this.crash()],
      [7, () => this.zombie()],
      [2, () => this.cancel()],
      [3, () => this.replay()],
      [3, () => this.resume()],
      [2, () => this.togglePause()],
      [1, () => this.drainQueue()],
    ];
    const index = this.prng.weighted(actions.map(([weight]) => weight));
    await (actions[index] as [number, () => Promise<void>])[1]();
  }

  private async submit(): Promise<void> {
    const requests: SubmitRunRequest[] = [];
    const count = this.prng.between(1, 2);
    // The checksum each key holds (stored, or set by an earlier request of this batch): a request that differs is refused.
    const keyChecksums = new Map(this.keyChecksums);
    let reused = false;
    for (let i = 0; i < count; i++) {
      const pipeline = this.prng.pick(SIM_PIPELINES);
      const request: SubmitRunRequest = { pipeline: pipeline.name, pipelineVersion: 1, input: { n: this.prng.int(1000) }, inputChecksum: '', stages: pipeline.stages.map((s) => s.name), firstJob: firstJob(pipeline) };
      if (this.prng.chance(0.3)) {
        const key = `key-${this.prng.int(4)}`;
        // The same key mostly carries the same input; now and then another one (a reuse, refused).
        request.idempotencyKey = key;
        request.input = this.prng.chance(0.1) ? { key, other: this.prng.int(3) } : { key };
      }
      if (this.prng.chance(0.3)) {
        const subject = `subject-${this.prng.int(3)}`;
        const latest = this.subjectVersions.get(subject) ?? 0;
        // Mostly a newer version (supersedes the older runs), sometimes an old one (born superseded).
        request.subjectId = subject;
        request.subjectVersion = latest > 0 && this.prng.chance(0.2) ? this.prng.between(1, latest) : latest + 1;
      }
      request.inputChecksum = JSON.stringify(request.input);
      if (request.idempotencyKey !== undefined) {
        const slot = `${request.pipeline}\0${request.idempotencyKey}`;
        const held = keyChecksums.get(slot);
        if (held === undefined) keyChecksums.set(slot, request.inputChecksum);
        else reused ||= held !== request.inputChecksum;
      }
      requests.push(request);
    }
    const before = reused ? stateDigest(this.state) : '';
    try {
      const results = await this.store.jobs.submit(requests);
      this.note('submit', () => `submit ${results.map((r) => `${r.run.id.slice(-4)}:${r.run.pipeline}${r.created ? '' : '(existing)'}:${r.run.status}`).join(' ')}`);
      if (reused) throw new InvariantViolation(Invariant.UNEXPECTED_ERROR, 'a batch reusing an idempotency key with another input was accepted');
    } catch (err) {
      if (!(reused && err instanceof ConflictError && err.code === 'IDEMPOTENCY_KEY_REUSED')) throw err;
      this.note('submit', `submit refused: ${err.message}`, false);
      assertUnchanged(this.state, before, 'a submission reusing an idempotency key');
      return;
    }
    for (const [slot, checksum] of keyChecksums) this.keyChecksums.set(slot, checksum);
    for (const request of requests) {
      if (request.subjectId === undefined) continue;
      this.subjectVersions.set(request.subjectId, Math.max(this.subjectVersions.get(request.subjectId) ?? 0, request.subjectVersion ?? 0));
    }
  }

  /** Queues with something claimable now (ready and due, or leased and expired). */
  private claimableQueues(): string[] {
    const now = this.clock.now();
    const queues = new Set<string>();
    for (const job of this.state.jobs.values()) {
      if ((job.state === 'ready' && job.availableAt <= now) || (job.state === 'leased' && (job.leaseUntil ?? 0) <= now)) queues.add(job.queue);
    }
    return [...queues].sort();
  }

  private async claim(worker: SimWorker, queues?: readonly string[], limit?: number): Promise<void> {
    const claimable = this.claimableQueues();
    const chosen =
      queues ?? Array.from({ length: this.prng.between(1, 2) }, () => (claimable.length > 0 && this.prng.chance(0.8) ? this.prng.pick(claimable) : this.prng.pick(SIM_QUEUES)));
    const leaseMs = this.prng.pick(LEASE_MS);
    const requests = chosen.map((queue) => ({ queue, workerId: worker.id, limit: limit ?? this.prng.between(1, 3), leaseMs }));
    const now = this.clock.now();
    const claimed = await this.store.jobs.claim(requests);
    this.count('redelivery', claimed.filter((c) => c.redelivered).length);
    this.count('ledger skip', claimed.filter((c) => c.ledgerOutput !== undefined).length);
    for (const c of claimed) {
      this.model.claimed(c, leaseMs, this.paused.has(c.job.queue), now);
      worker.held.push({ lease: { jobId: c.job.id, token: c.job.leaseToken ?? '' }, job: c.job, exhausted: c.exhausted, ...(c.ledgerOutput === undefined ? {} : { ledgerOutput: c.ledgerOutput }) });
    }
    this.note('claim', () => `${worker.id} claim ${chosen.join(',')} lease ${leaseMs} -> ${claimed.map((c) => `${c.job.id.slice(-4)}/${c.job.kind}/${c.job.stage}#${c.job.attempt}${c.redelivered ? ' redelivered' : ''}`).join(' ') || 'nothing'}`, claimed.length > 0);
  }

  /**
   * The state's digest when the oracle expects the store to refuse every one of `leases` (the
   * call must then change nothing), else '' (a digest per call would cost more than the store call).
   */
  private digestIfRefused(leases: readonly LeaseRef[], now: number): string {
    return leases.every((lease) => this.model.refusalReason(lease, now) !== null) ? stateDigest(this.state) : '';
  }

  private async renewLeases(holder: string, held: readonly Held[]): Promise<void> {
    if (held.length === 0) return;
    const leases = held.map((h) => h.lease);
    const now = this.clock.now();
    const before = this.digestIfRefused(leases, now);
    const results = await this.store.jobs.renew(leases.map((lease) => (this.prng.chance(0.3) ? { ...lease, progress: { at: now } } : lease)));
    this.note('renew', () => `${holder} renew ${leases.map((l, i) => `${l.jobId.slice(-4)}:${results[i]?.status}`).join(' ')}`, results.some((r) => r.status === 'renewed'));
    this.model.renewed(leases, results, now);
    this.count('heartbeat refused by the fence', results.filter((r) => r.status !== 'renewed').length);
    if (results.every((r) => r.status !== 'renewed')) assertUnchanged(this.state, before, 'a heartbeat');
  }

  private async renew(): Promise<void> {
    const worker = this.prng.pick(this.workers);
    await this.renewLeases(worker.id, worker.held.filter(() => this.prng.chance(0.7)));
  }

  private async advance(ms: number): Promise<void> {
    await this.clock.advance(ms);
    this.note('advance', `advance ${ms} ms`, false);
    if (this.clock.now() - this.lastReap >= REAP_MS) await this.reap();
  }

  private async reap(): Promise<void> {
    const result = await this.store.jobs.reap();
    const count = Object.values(result.redelivered).reduce((sum, n) => sum + n, 0);
    this.lastReap = this.clock.now();
    this.note('reap', `reap -> ${count}`, count > 0);
    this.model.reaped(count, this.clock.now());
  }

  /** The commit item a holder sends for `held`: the engine's decision for a random outcome (`succeed` forces success). */
  private commitItem(holder: string, held: Held, succeed: boolean): CommitItem {
    const { job, lease } = held;
    if (held.exhausted) {
      return { type: 'fail', lease, error: { class: 'transient', code: 'LEASE_EXPIRED', message: 'lease expired on every attempt' }, durationMs: 0, decision: exhaustedDecision(job) };
    }
    if (held.ledgerOutput !== undefined) return { type: 'complete', lease, output: held.ledgerOutput, durationMs: 0, next: nextAfter(job) };
    if (succeed || this.prng.chance(0.7)) {
      return { type: 'complete', lease, output: { by: holder, job: job.id, attempt: job.attempt }, durationMs: this.prng.int(500), next: nextAfter(job) };
    }
    const { decision, errorClass } = failureDecision(job, this.prng);
    return { type: 'fail', lease, error: { class: errorClass, code: 'SIM_FAILED', message: `simulated ${errorClass} failure` }, durationMs: this.prng.int(500), decision };
  }

  /** Commits `held` in one batch and checks every result against the fence. */
  private async commitHeld(holder: string, held: readonly Held[], succeed = false): Promise<void> {
    if (held.length === 0) return;
    const items = held.map((h) => this.commitItem(holder, h, succeed));
    const now = this.clock.now();
    const before = this.digestIfRefused(items.map((item) => item.lease), now);
    const results = await this.store.jobs.commit(items);
    this.note(
      'commit',
      () => `${holder} commit ${items.map((item, i) => `${item.lease.jobId.slice(-4)}/${held[i]?.job.stage}:${item.type === 'complete' ? 'complete' : item.decision.action}->${results[i]?.outcome}`).join(' ')}`,
      results.some((r) => r.outcome === 'committed'),
    );
    this.model.committed(items, results, held.map((h) => h.job.idempotencyKey), now);
    this.count('commit refused by the fence', results.filter((r) => r.outcome !== 'committed').length);
    if (results.every((r) => r.outcome !== 'committed')) assertUnchanged(this.state, before, 'a commit');
  }

  private async commitSome(): Promise<void> {
    const worker = this.prng.pick(this.workers);
    if (worker.held.length === 0) return this.claim(worker);
    const take = this.prng.between(1, Math.min(3, worker.held.length));
    const held = worker.held.splice(this.prng.int(worker.held.length - take + 1), take);
    await this.commitHeld(worker.id, held);
  }

  private async release(): Promise<void> {
    const worker = this.prng.pick(this.workers);
    if (worker.held.length === 0) return;
    const [held] = worker.held.splice(this.prng.int(worker.held.length), 1) as [Held];
    const delayMs = this.prng.pick([0, 0, 500]);
    const before = this.model.leases.get(held.lease.jobId)?.token === held.lease.token ? '' : stateDigest(this.state);
    const count = await this.store.jobs.release([{ ...held.lease, delayMs, lockWait: this.prng.chance(0.3) }]);
    this.note('release', `${worker.id} release ${held.lease.jobId.slice(-4)} delay ${delayMs} -> ${count}`, count > 0);
    this.model.released([held.lease], count);
    if (count === 0) assertUnchanged(this.state, before, 'a release');
  }

  /** A worker dies: it forgets its leases (its zombie keeps them) and a new worker takes its place. */
  private async crash(): Promise<void> {
    const index = this.prng.int(this.workers.length);
    const worker = this.workers[index] as SimWorker;
    this.stale.push(...worker.held);
    this.crashed.push(...worker.held.map((h) => ({ ...h.lease })));
    this.workers[index] = this.newWorker();
    this.note('crash', () => `${worker.id} crashes holding ${worker.held.map((h) => h.lease.jobId.slice(-4)).join(',') || 'nothing'}`, false);
  }

  /** A crashed worker comes back and heartbeats or commits one lease it held. */
  private async zombie(): Promise<void> {
    if (this.stale.length === 0) return this.commitSome();
    const [held] = this.stale.splice(this.prng.int(this.stale.length), 1) as [Held];
    if (this.prng.chance(0.3)) {
      await this.renewLeases('zombie', [held]);
      this.stale.push(held);
      return;
    }
    await this.commitHeld('zombie', [held]);
  }

  /** Runs an operator action expected to succeed, or to be refused with a conflict that changes nothing. */
  private async operator(what: string, action: () => Promise<unknown>, mayRefuse: boolean): Promise<void> {
    const before = mayRefuse ? stateDigest(this.state) : '';
    try {
      await action();
      this.note('operator', `operator ${what}`);
    } catch (err) {
      if (!(mayRefuse && err instanceof ConflictError)) throw err;
      this.note('operator', `operator ${what} refused: ${err.code}`, false);
      assertUnchanged(this.state, before, `operator ${what}`);
    }
  }

  private runIds(filter: (status: RunStatus) => boolean): string[] {
    return [...this.state.runs.values()].filter((run) => filter(run.status)).map((run) => run.id);
  }

  private async cancel(): Promise<void> {
    const runs = this.runIds(() => true);
    if (runs.length === 0) return;
    const runId = this.prng.pick(runs);
    const ended = isTerminal(this.state.requireRun(runId).status);
    await this.operator(`cancel ${runId.slice(-4)}`, () => this.store.operator.cancelRun(runId, 'simulated operator'), ended);
  }

  private async replay(): Promise<void> {
    const dead = [...this.state.jobs.values()].filter((job) => job.state === 'dead').map((job) => job.id);
    if (dead.length === 0) return;
    const jobId = this.prng.pick(dead);
    await this.operator(`replay ${jobId.slice(-4)}`, () => this.store.operator.replayJob(jobId), true);
  }

  private async resume(): Promise<void> {
    const parked = this.runIds((status) => status === 'parked');
    // Mostly a parked run; now and then any run (refused unless parked, and then nothing may change).
    const runs = this.prng.chance(0.8) ? parked : this.runIds(() => true);
    if (runs.length === 0) return;
    const runId = this.prng.pick(runs);
    const isParked = this.state.requireRun(runId).status === 'parked';
    await this.operator(`resume ${runId.slice(-4)}`, () => this.store.operator.resumeRun(runId), !isParked);
  }

  private async togglePause(): Promise<void> {
    const queue = this.prng.pick(SIM_QUEUES);
    const paused = !this.paused.has(queue);
    await this.store.operator.setQueuePaused(queue, paused);
    if (paused) this.paused.add(queue);
    else this.paused.delete(queue);
    this.note('operator', `operator ${paused ? 'pauses' : 'resumes'} ${queue}`);
  }

  private async drainQueue(): Promise<void> {
    const queue = this.prng.pick(SIM_QUEUES);
    const ready = [...this.state.jobs.values()].filter((job) => job.queue === queue && job.state === 'ready').length;
    const removed = await this.store.operator.drainQueue(queue);
    this.note('operator', `operator drains ${queue} -> ${removed}`, removed > 0);
    if (removed !== ready) throw new InvariantViolation(Invariant.HAND_BACK_MISCOUNTED, `draining ${queue} removed ${removed} job(s), it had ${ready} ready`);
  }

  // ---- the drain phase --------------------------------------------------------------------

  /**
   * The drain phase: rounds of honest work until every run ended (time moves past every lease and
   * backoff, parked runs are resumed and dead letters replayed, then everything due is claimed and
   * completed until nothing is left). Each of its steps is followed by the checks, with `kiln
   * verify` at the end of each round.
   */
  async drain(checked: (step: () => Promise<void>, audit?: Audit) => Promise<void>): Promise<void> {
    for (const queue of [...this.paused]) {
      await checked(async () => {
        await this.store.operator.setQueuePaused(queue, false);
        this.paused.delete(queue);
        this.note('operator', `operator resumes ${queue}`);
      });
    }
    // The zombies try once more, and the workers commit what they hold; the fence refuses what is stale.
    while (this.stale.length > 0) await checked(() => this.commitHeld('zombie', this.stale.splice(0, 1)));
    for (const worker of this.workers) await checked(() => this.commitHeld(worker.id, worker.held.splice(0), true));
    for (let round = 0; round < DRAIN_ROUNDS && this.runIds((status) => !isTerminal(status)).length > 0; round++) {
      // Past every lease and backoff: what anyone held is free again (reaped) and every retry due.
      await checked(() => this.advance(Math.max(...LEASE_MS) + SIM_BACKOFF.capMs));
      for (const runId of this.runIds((status) => status === 'parked')) {
        await checked(() => this.operator(`resume ${runId.slice(-4)}`, () => this.store.operator.resumeRun(runId), false));
      }
      for (const runId of this.runIds((status) => status === 'dead_lettered')) {
        const jobs = this.state.jobsOfRun(runId);
        const dead = jobs.find((job) => job.state === 'dead' && job.kind === 'stage');
        if (dead && jobs.every((job) => job.state === 'dead')) {
          await checked(() => this.operator(`replay ${dead.id.slice(-4)}`, () => this.store.operator.replayJob(dead.id), false));
        }
      }
      // One worker (a different one each round) claims everything due and completes it, until nothing is left to claim.
      const worker = this.workers[round % this.workers.length] as SimWorker;
      for (let cycle = 0; cycle < DRAIN_ROUNDS; cycle++) {
        await checked(() => this.claim(worker, SIM_QUEUES, 5));
        if (worker.held.length === 0) break;
        await checked(() => this.commitHeld(worker.id, worker.held.splice(0), true));
      }
      await checked(async () => {}, 'always');
    }
    await checked(() => this.settled());
  }

  /** After the drain: every run ended, no lease left (expired or not), no live job. */
  private async settled(): Promise<void> {
    this.note('settled', 'drain over: every run must have ended');
    const stuck = [...this.state.runs.values()].filter((run) => !isTerminal(run.status));
    if (stuck.length > 0) {
      const jobs = (runId: string): string => this.state.jobsOfRun(runId).map((job) => `${job.id.slice(-4)}/${job.kind}/${job.stage}:${job.state}`).join(',');
      throw new InvariantViolation(Invariant.RUN_STUCK_AFTER_DRAIN, `after ${DRAIN_ROUNDS} drain rounds, ${stuck.map((run) => `run ${run.id} is ${run.status} (jobs ${jobs(run.id) || 'none'})`).join('; ')}`);
    }
    await auditStore(this.audited, this.clock, 0);
    const live = [...this.state.jobs.values()].filter((job) => job.state !== 'dead');
    if (live.length > 0) throw new InvariantViolation(Invariant.RUN_STUCK_AFTER_DRAIN, `every run ended but jobs are still live: ${live.map((job) => job.id).join(', ')}`);
  }
}

/**
 * When a step is followed by `kiln verify`: `changed`, when a call of the step may have changed
 * the store (a call that was refused is checked to have changed nothing instead, a claim that got
 * nothing changed nothing, and a clock move alone is audited with the next change: the leases
 * check only looks at time next to what the store holds); `always`; `never` (the drain's steps,
 * audited once per round).
 */
type Audit = 'changed' | 'always' | 'never';

/** Where every schedule's clock starts. */
const START_MS = Date.UTC(2026, 0, 1);

/** Runs one schedule; throws {@link SimulationFailure} when an invariant breaks. */
export async function runSchedule(options: ScheduleOptions): Promise<ScheduleResult> {
  const { seed } = options;
  const variant = options.variant ?? 'correct';
  const prng = createPrng(seed);
  const clock = createFakeClock(START_MS);
  const { ctx, store } = await openSimStore(variant, clock, createCountingIds(clock));
  const sim = new Simulation(prng, clock, store, ctx);
  /** Runs one step, then the checks (see {@link Audit}). */
  const checked = async (step: () => Promise<void>, audit: Audit = 'never'): Promise<void> => {
    sim.step += 1;
    const changes = sim.changes;
    try {
      await step();
      await sim.check(sim.changes > changes, audit);
    } catch (err) {
      if (err instanceof SimulationFailure) throw err;
      const invariant = err instanceof InvariantViolation ? err.invariant : Invariant.UNEXPECTED_ERROR;
      const detail = err instanceof Error ? (err instanceof InvariantViolation ? err.message : `${err.name}: ${err.message}`) : String(err);
      throw new SimulationFailure(seed, variant, sim.step, invariant, detail, sim.recentActions);
    }
  };
  try {
    const steps = options.steps ?? prng.between(20, 50);
    for (let i = 0; i < steps; i++) await checked(() => sim.randomStep(), 'changed');
    await sim.drain(checked);
    return { seed, steps: sim.step, runs: sim.runCount, actions: sim.actions };
  } finally {
    await store.close();
  }
}
