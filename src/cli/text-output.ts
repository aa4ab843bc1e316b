/** Human-readable output of the CLI: aligned tables, times and durations. */

/** An aligned plain-text table; the last column is not padded. */
export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** An epoch-ms or ISO time as `YYYY-MM-DD HH:MM:SS` (UTC), or `-`. */
export function formatTime(time: number | string | null | undefined): string {
  if (time === null || time === undefined) return '-';
  return new Date(time).toISOString().replace('T', ' ').slice(0, 19);
}

/** A duration as `850 ms`, `3.2 s` or `4 m 05 s`, or `-`. */
export function formatDurationMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '-';
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.floor((ms % 60_000) / 1_000);
  return `${minutes} m ${String(seconds).padStart(2, '0')} s`;
}
