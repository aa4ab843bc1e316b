/**
 * Admission control of submissions (`admission:` in kiln.yaml): per tenant a maximum of runs in
 * flight and a submit rate, per queue a backlog limit. The counted limits (in flight, backlog)
 * travel with each request to the store, which checks them in the submit's own transaction, so
 * concurrent submissions never overshoot them (see `SubmitAdmission`). The submit rate is a token
 * bucket per tenant kept HERE, in this process: with N API processes a tenant may submit up to N
 * times its rate. A request answered by its idempotency key is never refused and spends no token.
 */
import type { Clock } from '../core/clock.ts';
import type { SubmitAdmission, SubmitRunRequest, SubmitRunResult } from '../core/ports/jobs.ts';

/** One tenant's limits; an absent field is no limit. */
export interface TenantLimits {
  /** Runs of the tenant queued or running at once. */
  maxInFlightRuns?: number;
  /** Runs the tenant may submit per second (sustained), per API process. */
  submitRate?: number;
  /** Runs the tenant may submit at once after a quiet spell; default: the rate rounded up (at least 1). */
  submitBurst?: number;
}

/** One queue's limit; an absent field is no limit. */
export interface QueueLimits {
  /** Ready jobs the queue may hold; a submission whose first stage's queue is full is refused. */
  maxBacklog?: number;
}

/** The `admission:` section, resolved. Every part is optional; nothing set is no admission control. */
export interface AdmissionLimits {
  /** Limits of every tenant (runs submitted without a tenant count as one tenant). */
  tenantDefaults?: TenantLimits;
  /** Per tenant name, field by field over `tenantDefaults`. */
  tenants?: Readonly<Record<string, TenantLimits>>;
  /** Limit of every queue. */
  queueDefaults?: QueueLimits;
  /** Per queue (`<pipeline>.<stage>`), over `queueDefaults`. */
  queues?: Readonly<Record<string, QueueLimits>>;
}

/** `Retry-After` of an in-flight or backlog refusal: runs end and jobs are claimed all the time. */
export const ADMISSION_RETRY_AFTER_MS = 1_000;

/** Buckets kept before full ones (tenants quiet long enough to be back at their burst) are dropped. */
const MAX_IDLE_BUCKETS = 10_000;

interface Bucket {
  tokens: number;
  at: number;
}

/** A submission admitted so far: its requests (with their limits) and how to settle its tokens. */
export interface Admitted {
  requests: SubmitRunRequest[];
  /** After the store answered: tokens of the requests that created nothing go back. */
  settle(results: readonly SubmitRunResult[]): void;
  /** After the store refused the batch: every token taken goes back. */
  refund(): void;
}

/** The admission of one engine. */
export interface Admission {
  admit(requests: SubmitRunRequest[]): Admitted;
}

function hasLimit(limits: TenantLimits | QueueLimits | undefined): boolean {
  return limits !== undefined && Object.values(limits).some((v) => v !== undefined);
}

/** Whether `limits` sets anything at all (else the engine skips admission entirely). */
export function admissionConfigured(limits: AdmissionLimits | undefined): boolean {
  if (limits === undefined) return false;
  const { tenantDefaults, tenants = {}, queueDefaults, queues = {} } = limits;
  return hasLimit(tenantDefaults) || hasLimit(queueDefaults) || Object.values(tenants).some(hasLimit) || Object.values(queues).some(hasLimit);
}

/** The admission of `limits`, or undefined when they set nothing (no check, no cost). */
export function createAdmission(limits: AdmissionLimits | undefined, clock: Clock): Admission | undefined {
  if (limits === undefined || !admissionConfigured(limits)) return undefined;
  const buckets = new Map<string | null, Bucket>();
  const tenantLimits = (tenant: string | null): TenantLimits => ({
    ...limits.tenantDefaults,
    ...(tenant === null ? undefined : limits.tenants?.[tenant]),
  });
  const maxBacklogOf = (queue: string): number | undefined => limits.queues?.[queue]?.maxBacklog ?? limits.queueDefaults?.maxBacklog;
  const burstOf = (l: TenantLimits & { submitRate: number }): number => l.submitBurst ?? Math.max(1, Math.ceil(l.submitRate));

  /** The bucket of `tenant` refilled to now. */
  const bucketOf = (tenant: string | null, rate: number, burst: number): Bucket => {
    const now = clock.now();
    let bucket = buckets.get(tenant);
    if (!bucket) {
      if (buckets.size >= MAX_IDLE_BUCKETS) dropFullBuckets(rate, burst);
      bucket = { tokens: burst, at: now };
      buckets.set(tenant, bucket);
    }
    bucket.tokens = Math.min(burst, bucket.tokens + (Math.max(0, now - bucket.at) * rate) / 1000);
    bucket.at = now;
    return bucket;
  };
  const dropFullBuckets = (rate: number, burst: number): void => {
    const now = clock.now();
    for (const [tenant, b] of buckets) if (b.tokens + ((now - b.at) * rate) / 1000 >= burst) buckets.delete(tenant);
  };

  return {
    admit(requests) {
      const perTenant = new Map<string | null, number>();
      for (const r of requests) perTenant.set(r.tenant ?? null, (perTenant.get(r.tenant ?? null) ?? 0) + 1);
      const taken = new Map<string | null, number>();
      const refused = new Map<string | null, number>();
      for (const [tenant, count] of perTenant) {
        const l = tenantLimits(tenant);
        if (l.submitRate === undefined) continue;
        const rate = l.submitRate;
        const burst = burstOf({ ...l, submitRate: rate });
        const bucket = bucketOf(tenant, rate, burst);
        // A batch larger than the burst passes once the bucket is full, and leaves it in debt.
        const needed = Math.min(count, burst);
        if (bucket.tokens >= needed) {
          bucket.tokens -= count;
          taken.set(tenant, count);
        } else {
          refused.set(tenant, Math.ceil(((needed - bucket.tokens) * 1000) / rate));
        }
      }
      const giveBack = (tenant: string | null, tokens: number): void => {
        const l = tenantLimits(tenant);
        const bucket = buckets.get(tenant);
        if (bucket && l.submitRate !== undefined) bucket.tokens = Math.min(burstOf({ ...l, submitRate: l.submitRate }), bucket.tokens + tokens);
      };
      return {
        requests: requests.map((request) => {
          const tenant = request.tenant ?? null;
          const l = tenantLimits(tenant);
          const retryAfterMs = refused.get(tenant);
          const admission: SubmitAdmission = { retryAfterMs: ADMISSION_RETRY_AFTER_MS };
          if (retryAfterMs !== undefined) admission.refuse = { code: 'TENANT_RATE_LIMITED', retryAfterMs };
          if (l.maxInFlightRuns !== undefined) admission.maxInFlightRuns = l.maxInFlightRuns;
          const maxBacklog = maxBacklogOf(request.firstJob.queue);
          if (maxBacklog !== undefined) admission.maxBacklog = maxBacklog;
          const limited = admission.refuse !== undefined || admission.maxInFlightRuns !== undefined || admission.maxBacklog !== undefined;
          return limited ? { ...request, admission } : request;
        }),
        settle(results) {
          results.forEach(({ created }, i) => {
            const tenant = requests[i]?.tenant ?? null;
            if (!created && taken.has(tenant)) giveBack(tenant, 1);
          });
        },
        refund() {
          for (const [tenant, tokens] of taken) giveBack(tenant, tokens);
        },
      };
    },
  };
}
