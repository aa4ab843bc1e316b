/**
 * The indexes the memory state keeps over its jobs, so the job path reads only what it needs
 * instead of scanning every job: the live job of each idempotency key, the jobs of each run, and
 * per queue its leased jobs and its ready jobs in claim lanes. The state files a job when it is
 * created, refiles it after every change of `state`, `availableAt` or `attempt`, and unfiles it
 * when it is deleted; each job's filing is remembered, so refiling never depends on the fields
 * that changed since.
 */
import type { Job } from '../../core/model.ts';
import { JobState } from '../../core/model.ts';
import { comparePlain } from '../shared/claim-order.ts';

/**
 * Ready jobs of one queue sharing priority, tenant and retry-ness (`attempt >= 1`), sorted in
 * plain claim order (availableAt, then id), so the due ones are a prefix: `jobs` from index
 * `head` on. Claims take jobs from the front, which only moves `head` (Array.shift() copies the
 * whole array once it is large, so a backlog of 20,000 jobs made every claim cost 20,000 moves);
 * the taken slots are dropped once they are the larger part.
 */
export interface ReadyLane {
  readonly priority: number;
  readonly tenant: string | null;
  readonly retry: boolean;
  jobs: (Job | undefined)[];
  head: number;
}

/** The jobs of `lane`, in plain order. */
function laneJobs(lane: ReadyLane): Job[] {
  return lane.jobs.slice(lane.head) as Job[];
}

/** Slots taken from the front are dropped once there are this many and they are most of the array. */
const COMPACT_AFTER = 1_024;

/** One queue's jobs as claims read them. */
export interface QueueJobs {
  /** Ready lanes by `<priority>:<retry>:<tenant>`; a lane is dropped once empty. */
  readonly lanes: Map<string, ReadyLane>;
  /** Every ready job of the queue, due or not (admission's backlog). */
  readyCount: number;
  readonly leased: Set<Job>;
}

/** Where a job is filed now. */
interface Filing {
  state: JobState;
  /** The lane of a ready job, with the availableAt it was sorted by. */
  lane: ReadyLane | null;
  availableAt: number;
}

/** Lane key; the tenant comes last and null has its own spelling, so keys cannot clash. */
function laneKey(job: Job, retry: boolean): string {
  return `${job.priority}:${retry ? 'r' : 'f'}:${job.tenant === null ? '-' : `+${job.tenant}`}`;
}

/** Index of the first entry of `jobs` not before `key` in plain order (binary search). */
function lowerBound(lane: ReadyLane, key: Pick<Job, 'priority' | 'availableAt' | 'id' | 'tenant'>): number {
  const { jobs } = lane;
  let lo = lane.head;
  let hi = jobs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (comparePlain(jobs[mid] as Job, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The first (at most `limit`) due jobs of `lane`, in plain order. */
export function dueJobs(lane: ReadyLane, now: number, limit: number): Job[] {
  const due: Job[] = [];
  const { jobs } = lane;
  for (let i = lane.head; i < jobs.length && due.length < limit; i++) {
    const job = jobs[i] as Job;
    if (job.availableAt > now) break;
    due.push(job);
  }
  return due;
}

/** The job indexes of one memory state. */
export class JobIndex {
  /** Idempotency key -> its live (not dead) job. */
  private readonly liveByKey = new Map<string, Job>();
  /** Run id -> its jobs in creation order. */
  private readonly byRun = new Map<string, Set<Job>>();
  private readonly byQueue = new Map<string, QueueJobs>();
  private readonly filings = new Map<Job, Filing>();

  /** The live job holding `key`, if any. */
  liveJob(key: string): Job | undefined {
    return this.liveByKey.get(key);
  }

  /** Jobs of one run, in creation order. */
  jobsOfRun(runId: string): Job[] {
    return [...(this.byRun.get(runId) ?? [])];
  }

  /** The queue's jobs as claims read them, if it ever had any. */
  queue(name: string): QueueJobs | undefined {
    return this.byQueue.get(name);
  }

  /** Every leased job, queue by queue. */
  *leasedJobs(): Iterable<Job> {
    for (const jobs of this.byQueue.values()) yield* jobs.leased;
  }

  /**
   * Everything the indexes hold, by job id, in a fixed order: what a check compares with an
   * index rebuilt from the jobs (the simulation does after every step).
   */
  snapshot(): unknown {
    const ids = (jobs: Iterable<Job>): string[] => [...jobs].map((job) => job.id);
    const sorted = <T>(entries: Iterable<[string, T]>): [string, T][] => [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return {
      live: sorted([...this.liveByKey].map(([key, job]) => [key, job.id])),
      runs: sorted([...this.byRun].map(([runId, jobs]) => [runId, ids(jobs)])),
      queues: sorted(
        [...this.byQueue]
          .filter(([, queue]) => queue.readyCount > 0 || queue.leased.size > 0)
          .map(([name, queue]) => [name, { readyCount: queue.readyCount, leased: ids(queue.leased).sort(), lanes: sorted([...queue.lanes].map(([key, lane]) => [key, ids(laneJobs(lane))])) }]),
      ),
    };
  }

  /** Files a job just created. */
  add(job: Job): void {
    const runJobs = this.byRun.get(job.runId);
    if (runJobs) runJobs.add(job);
    else this.byRun.set(job.runId, new Set([job]));
    this.file(job);
  }

  /** Refiles a job after a change of its state, availableAt or attempt. */
  refile(job: Job): void {
    this.unfile(job);
    this.file(job);
  }

  /** Unfiles a job being deleted. */
  remove(job: Job): void {
    this.unfile(job);
    const runJobs = this.byRun.get(job.runId);
    runJobs?.delete(job);
    if (runJobs?.size === 0) this.byRun.delete(job.runId);
  }

  private queueJobs(name: string): QueueJobs {
    let jobs = this.byQueue.get(name);
    if (!jobs) {
      jobs = { lanes: new Map(), readyCount: 0, leased: new Set() };
      this.byQueue.set(name, jobs);
    }
    return jobs;
  }

  private file(job: Job): void {
    if (job.state !== JobState.dead) this.liveByKey.set(job.idempotencyKey, job);
    const filing: Filing = { state: job.state, lane: null, availableAt: job.availableAt };
    if (job.state === JobState.leased) this.queueJobs(job.queue).leased.add(job);
    if (job.state === JobState.ready) {
      const queue = this.queueJobs(job.queue);
      const retry = job.attempt >= 1;
      const key = laneKey(job, retry);
      let lane = queue.lanes.get(key);
      if (!lane) {
        lane = { priority: job.priority, tenant: job.tenant, retry, jobs: [], head: 0 };
        queue.lanes.set(key, lane);
      }
      // Enqueues mostly arrive in order (ids grow with time), so this is usually an append.
      const last = lane.jobs.length > lane.head ? lane.jobs[lane.jobs.length - 1] : undefined;
      if (last === undefined || comparePlain(last, job) < 0) lane.jobs.push(job);
      else lane.jobs.splice(lowerBound(lane, job), 0, job);
      queue.readyCount += 1;
      filing.lane = lane;
    }
    this.filings.set(job, filing);
  }

  private unfile(job: Job): void {
    const filing = this.filings.get(job);
    if (!filing) return;
    this.filings.delete(job);
    if (filing.state !== JobState.dead && this.liveByKey.get(job.idempotencyKey) === job) this.liveByKey.delete(job.idempotencyKey);
    const queue = this.byQueue.get(job.queue);
    if (!queue) return;
    if (filing.state === JobState.leased) queue.leased.delete(job);
    const lane = filing.lane;
    if (lane === null) return;
    queue.readyCount -= 1;
    if (lane.jobs[lane.head] === job) {
      // Claims take lanes from the front: the slot is emptied and the head moves past it.
      lane.jobs[lane.head] = undefined;
      lane.head += 1;
    } else {
      const at = lowerBound(lane, { priority: job.priority, availableAt: filing.availableAt, id: job.id, tenant: job.tenant });
      lane.jobs.splice(lane.jobs[at] === job ? at : lane.jobs.indexOf(job, lane.head), 1);
    }
    if (lane.head === lane.jobs.length) queue.lanes.delete(laneKey(job, lane.retry));
    else if (lane.head >= COMPACT_AFTER && lane.head * 2 >= lane.jobs.length) {
      lane.jobs = lane.jobs.slice(lane.head);
      lane.head = 0;
    }
  }
}
