/**
 * What `kiln assets add` reports per file: the outcome record, its one-line and JSON forms (as
 * each file finishes) and the summary table printed at the end.
 */
import type { RunStatus } from '../../core/model.ts';
import { renderTable } from '../text-output.ts';

/** A file's status: its run's status, or `rejected` when it was never submitted (unreadable, too large). */
export type OutcomeStatus = RunStatus | 'rejected';

/** What became of one file. */
export interface FileOutcome {
  /** The file as shown to the user. */
  file: string;
  /** Null when no id could be derived (the file could not be read). */
  assetId: string | null;
  /** The upload version of `assetId`; null when rejected before submission. */
  version: number | null;
  runId: string | null;
  /** `queued` or `running` only when the command stopped waiting first (timeout, Ctrl-C). */
  status: OutcomeStatus;
  /** Profiles the run published (succeeded runs only). */
  published: string[];
  error: { code: string; message: string } | null;
}

/** Statuses that do not make the command fail: the newest version of every asset was published. */
const OK_STATUSES: readonly OutcomeStatus[] = ['succeeded', 'superseded'];

/**
 * Whether an outcome is fine. `superseded` is: a newer version of the same asset (from this command
 * when two files share an id, or from another upload) replaced it before it published, by design.
 */
export function isOutcomeOk(outcome: FileOutcome): boolean {
  return OK_STATUSES.includes(outcome.status);
}

/** Whether the command stopped waiting before the file's run ended. */
export function isUnfinished(outcome: FileOutcome): boolean {
  return outcome.status === 'queued' || outcome.status === 'running';
}

/** The last column of the table and of a progress line: profiles published, or why not. */
function resultOf(outcome: FileOutcome): string {
  if (outcome.status === 'succeeded') return outcome.published.join(', ') || '(no profiles)';
  if (isUnfinished(outcome)) return `not finished yet; the run stays in the store and any worker completes it (kiln run ${outcome.runId ?? '?'})`;
  return outcome.error ? `${outcome.error.code}: ${outcome.error.message}` : '-';
}

/** `[2/5] cat.png -> cat v1: succeeded (thumb, preview, large)`: one line per finished file. */
export function formatOutcomeLine(outcome: FileOutcome, finished: number, total: number): string {
  const target = outcome.assetId === null ? '' : ` -> ${outcome.assetId}${outcome.version === null ? '' : ` v${outcome.version}`}`;
  return `[${finished}/${total}] ${outcome.file}${target}: ${outcome.status} (${resultOf(outcome)})`;
}

/** One file as a JSON object (the `--json` output, one per line), field names as in the HTTP API. */
export function outcomeJson(outcome: FileOutcome): Record<string, unknown> {
  return {
    file: outcome.file,
    asset_id: outcome.assetId,
    version: outcome.version,
    run_id: outcome.runId,
    status: outcome.status,
    ok: isOutcomeOk(outcome),
    published: outcome.published,
    error: outcome.error,
  };
}

/** Notes on ids shared by several files: they became successive versions of one asset. */
function sharedIdNotes(outcomes: readonly FileOutcome[]): string[] {
  const byId = new Map<string, FileOutcome[]>();
  for (const o of outcomes) {
    if (o.assetId === null || o.version === null) continue;
    byId.set(o.assetId, [...(byId.get(o.assetId) ?? []), o]);
  }
  return [...byId.entries()]
    .filter(([, group]) => group.length > 1)
    .map(([id, group]) => {
      const versions = group.map((o) => `${o.file} = v${o.version ?? '?'}`).join(', ');
      return `note: ${group.length} files map to asset id ${id} and became its versions (${versions}); only the newest version is published, older ones end superseded`;
    });
}

/** `4 files: 3 succeeded, 1 dead_lettered`. */
function totalsLine(outcomes: readonly FileOutcome[]): string {
  const counts = new Map<string, number>();
  for (const o of outcomes) counts.set(o.status, (counts.get(o.status) ?? 0) + 1);
  const parts = [...counts.entries()].map(([status, n]) => `${n} ${status}`);
  return `${outcomes.length} file${outcomes.length === 1 ? '' : 's'}: ${parts.join(', ')}`;
}

/** The table printed at the end (file, asset id, version, status, result), then notes and totals. */
export function formatAddSummary(outcomes: readonly FileOutcome[]): string {
  const rows = outcomes.map((o) => [o.file, o.assetId ?? '-', o.version === null ? '-' : String(o.version), o.status, resultOf(o)]);
  const table = renderTable(['FILE', 'ASSET ID', 'VERSION', 'STATUS', 'PUBLISHED / ERROR'], rows);
  return [table, '', ...sharedIdNotes(outcomes), totalsLine(outcomes)].join('\n');
}
