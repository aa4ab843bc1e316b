/**
 * What `Store.artifactRefs.list` looks for, defined once for every store: which JSON
 * text counts as a reference to an artifact, which runs may still read theirs, and the order the
 * result comes in. Every store scans the JSON *text* of a value (not its parsed tree), so a ref
 * is found wherever it sits — in a string, inside a longer string, or as an object key — and the
 * memory, SQLite and PostgreSQL stores agree on every value.
 *
 * Pure TypeScript with no driver import.
 */
import type { RunStatus } from '../../core/model.ts';

/**
 * `sha256:` and exactly 64 lowercase hex digits, not followed by a further hex digit (65 digits
 * is not a ref; a longer string that merely contains a ref still references it, which keeps the
 * garbage collector on the safe side). The same source text is a valid PostgreSQL ARE, so the
 * PostgreSQL store passes it to `regexp_matches` as is.
 */
export const ARTIFACT_REF_PATTERN = 'sha256:[0-9a-f]{64}(?![0-9a-fA-F])';

/**
 * Runs whose input and stage outputs are still referenced: they may run again or be replayed.
 * Exactly the statuses not in `TERMINAL_RUN_STATUSES`, spelled out because the SQL stores
 * embed them in statement text.
 */
export const REPLAYABLE_RUN_STATUSES: readonly RunStatus[] = ['queued', 'running', 'parked', 'dead_lettered'];

/** Adds every artifact ref found in `jsonText` to `into`. */
export function collectArtifactRefs(jsonText: string, into: Set<string>): void {
  // A cheap test first: most values reference no artifact at all.
  if (!jsonText.includes('sha256:')) return;
  // A fresh RegExp per call: a shared global one would carry `lastIndex` between calls.
  for (const match of jsonText.matchAll(new RegExp(ARTIFACT_REF_PATTERN, 'g'))) into.add(match[0]);
}

/** The collected refs sorted by code unit (byte order for the ASCII refs are), as the port returns them. */
export function sortedArtifactRefs(refs: Iterable<string>): string[] {
  return [...new Set(refs)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
