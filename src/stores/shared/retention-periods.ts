/**
 * The run statuses a retention policy prunes, with their periods, as every store passes them to
 * its SQL or script (see `RetentionPort`).
 */
import type { RetentionPolicy } from '../../core/ports/retention.ts';
import { PRUNABLE_RUN_STATUSES, RETENTION_KIND_OF_STATUS } from '../../core/ports/retention.ts';

/** Each prunable status whose period is not null (kept forever), with that period in ms, in a fixed order. */
export function runPeriods(policy: RetentionPolicy): { status: string; periodMs: number }[] {
  return PRUNABLE_RUN_STATUSES.flatMap((status) => {
    const periodMs = policy[RETENTION_KIND_OF_STATUS[status]];
    return periodMs === null ? [] : [{ status, periodMs }];
  });
}
