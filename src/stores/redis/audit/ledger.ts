/**
 * The ledger audit of one run, from what audit-ledger-mismatches.lua read of it: a ledger entry of
 * kind `stage` exists exactly for each `succeeded` stage, and one of kind `rollback` exactly for
 * each stage whose rollback `succeeded` (see `AuditPort.ledgerMismatches`).
 */
import { jobIdempotencyKey } from '../../../core/keys.ts';
import { JobKind, RollbackStatus, StageStatus } from '../../../core/model.ts';
import type { LedgerMismatch } from '../../../core/ports/audit.ts';
import { LedgerProblem } from '../../../core/ports/audit.ts';
import { listOf } from '../rows.ts';

/** A run as the script reads it: stages as [stage, status, rollbackStatus or ''], entries as [key, stage, kind]. */
export interface RunLedgerRead {
  id: string;
  stages: [string, StageStatus, RollbackStatus | ''][] | Record<string, never>;
  entries: [string, string, JobKind][] | Record<string, never>;
}

/** The statuses of one stage record. */
interface StageStatuses {
  status: StageStatus;
  rollbackStatus: RollbackStatus | null;
}

/** Whether a ledger entry of `kind` must exist for a stage in this state. */
function needsEntry(record: StageStatuses | undefined, kind: JobKind): boolean {
  return kind === JobKind.stage ? record?.status === StageStatus.succeeded : record?.rollbackStatus === RollbackStatus.succeeded;
}

/** The run's disagreements between ledger and stage records, by stage then kind. */
export function ledgerMismatchesOfRun(run: RunLedgerRead): LedgerMismatch[] {
  const records = new Map<string, StageStatuses>(listOf(run.stages).map(([stage, status, rollback]) => [stage, { status, rollbackStatus: rollback === '' ? null : rollback }]));
  const found: LedgerMismatch[] = [];
  const report = (stage: string, kind: JobKind, problem: LedgerProblem, key: string): void => {
    const record = records.get(stage);
    found.push({ runId: run.id, stage, kind, problem, key, stageStatus: record?.status ?? null, rollbackStatus: record?.rollbackStatus ?? null });
  };
  const recorded = new Set<string>();
  for (const [key, stage, kind] of listOf(run.entries)) {
    recorded.add(`${stage}\0${kind}`);
    if (!needsEntry(records.get(stage), kind)) report(stage, kind, LedgerProblem.unexpected, key);
  }
  for (const [stage, record] of records) {
    for (const kind of [JobKind.stage, JobKind.rollback]) {
      if (needsEntry(record, kind) && !recorded.has(`${stage}\0${kind}`)) report(stage, kind, LedgerProblem.missing, jobIdempotencyKey(run.id, stage, kind));
    }
  }
  const order = (m: LedgerMismatch): string => `${m.stage}\0${m.kind}`;
  return found.sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
}
