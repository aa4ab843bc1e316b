/**
 * The invariant audit behind `kiln verify` and `GET /v1/verify`: it reads the store through its
 * `audit` sub-port page by page and the artifact store object by object, and lists every broken
 * guarantee of DESIGN.md with the ids involved (see `VerifyCheck` and `ViolationKind`). It changes
 * nothing. Memory stays bounded by a page (plus the violations it lists), whatever the store's size.
 */
import { ValidationError } from '../../core/errors.ts';
import { checkCacheEntries, checkPublications, checkTemps } from './check-artifacts.ts';
import type { CheckContext, VerifyDeps } from './check-context.ts';
import { checkLedger, checkLeases, checkRuns } from './check-records.ts';
import { VERIFY_CHECKS, type CheckSummary, type VerifyCheck, type VerifyOptions, type VerifyReport, type Violation } from './verify-types.ts';

/** Lease grace when none is given: a minute is sixty reaper passes at the default `worker.reapMs`. */
export const DEFAULT_VERIFY_LEASE_GRACE_MS = 60_000;
/** Temp grace when none is given: the reaper's own default (`worker.tempGraceMs`). */
export const DEFAULT_VERIFY_TEMP_GRACE_MS = 3_600_000;
/** Default of `VerifyOptions.maxViolations`. */
export const DEFAULT_MAX_VIOLATIONS = 1_000;
/** Default of `VerifyOptions.pageSize`. */
export const DEFAULT_VERIFY_PAGE_SIZE = 500;

const CHECKS: Readonly<Record<VerifyCheck, (ctx: CheckContext) => Promise<boolean>>> = {
  publications: checkPublications,
  cache: checkCacheEntries,
  leases: checkLeases,
  runs: checkRuns,
  ledger: checkLedger,
  temps: checkTemps,
};

function checkOptions(options: VerifyOptions): void {
  const durations = { leaseGraceMs: options.leaseGraceMs, tempGraceMs: options.tempGraceMs };
  for (const [name, value] of Object.entries(durations)) {
    if (!Number.isFinite(value) || value < 0) throw new ValidationError(`${name} must be a duration of 0 ms or more, got ${value}`);
  }
  const unknown = (options.checks ?? []).filter((check) => !VERIFY_CHECKS.includes(check));
  if (unknown.length > 0) throw new ValidationError(`unknown checks ${unknown.join(', ')}: choose from ${VERIFY_CHECKS.join(', ')}`);
}

/** Audits the store's invariants; see the module comment. */
export async function verifyStore(deps: VerifyDeps, options: VerifyOptions): Promise<VerifyReport> {
  checkOptions(options);
  const maxViolations = Math.max(0, options.maxViolations ?? DEFAULT_MAX_VIOLATIONS);
  const selected = VERIFY_CHECKS.filter((check) => options.checks === undefined || options.checks.includes(check));
  const startedAt = deps.clock.now();
  const violations: Violation[] = [];
  let violationCount = 0;
  const summaries: CheckSummary[] = [];
  for (const check of selected) {
    const summary: CheckSummary = { check, scanned: 0, violations: 0, complete: false };
    summaries.push(summary);
    if (options.signal?.aborted) continue;
    const ctx: CheckContext = {
      ...deps,
      leaseGraceMs: options.leaseGraceMs,
      tempGraceMs: options.tempGraceMs,
      pageSize: Math.max(1, options.pageSize ?? DEFAULT_VERIFY_PAGE_SIZE),
      signal: options.signal,
      report(violation) {
        violationCount += 1;
        summary.violations += 1;
        if (violations.length < maxViolations) violations.push({ ...violation, check });
      },
      scanned(count) {
        summary.scanned += count;
        options.onProgress?.({ check, scanned: summary.scanned, violations: violationCount });
      },
    };
    summary.complete = await CHECKS[check](ctx);
  }
  const complete = summaries.every((s) => s.complete);
  return {
    ok: complete && violationCount === 0,
    complete,
    startedAt,
    durationMs: deps.clock.now() - startedAt,
    leaseGraceMs: options.leaseGraceMs,
    tempGraceMs: options.tempGraceMs,
    checks: summaries,
    violationCount,
    violations,
  };
}
