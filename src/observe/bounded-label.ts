/**
 * A label whose values come from users (tenants, render profiles) must not grow a metric without
 * bound: every label value is a time series in Prometheus. A bounded label passes the first
 * `limit` distinct values it sees through and reports every later one as `other`.
 */

/** Value reported for values beyond the limit. */
export const OVERFLOW_LABEL = 'other';

/** Maps label values, keeping at most `limit` distinct ones (see the module comment). */
export function boundedLabel(limit: number): (value: string) => string {
  const seen = new Set<string>();
  return (value) => {
    if (seen.has(value)) return value;
    if (seen.size >= limit) return OVERFLOW_LABEL;
    seen.add(value);
    return value;
  };
}
