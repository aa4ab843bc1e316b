/**
 * Plain-text tables for benchmark output: by default the first column is left-aligned and the
 * rest right-aligned so numbers line up.
 */

/** Alignment of one column. */
export type ColumnAlign = 'left' | 'right';

/** Renders a header, a dashed rule and the rows; missing cells print as empty. */
export function formatTextTable(header: readonly string[], rows: readonly (readonly string[])[], align?: readonly ColumnAlign[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const alignOf = (i: number): ColumnAlign => align?.[i] ?? (i === 0 ? 'left' : 'right');
  const line = (cells: readonly string[]): string =>
    widths
      .map((w, i) => (alignOf(i) === 'left' ? (cells[i] ?? '').padEnd(w) : (cells[i] ?? '').padStart(w)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}
