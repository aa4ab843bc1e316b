/**
 * The claim order of `JobsPort.claim`, fair across tenants with priority first: each candidate
 * gets its rank among the candidates of its tenant and priority (by availableAt, then id), and
 * candidates sort by priority, rank, availableAt, id. Shared by the stores that pick candidates
 * per tenant and order them in TypeScript (memory, SQLite); PostgreSQL and Redis compute the same
 * order in their routines.
 */

/** What the order reads of a candidate. */
export interface ClaimOrderKey {
  priority: number;
  availableAt: number;
  id: string;
  tenant: string | null;
}

/** Plain order: priority (lower first), then availableAt, then id. */
export function comparePlain(a: ClaimOrderKey, b: ClaimOrderKey): number {
  return a.priority - b.priority || a.availableAt - b.availableAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** `items` (not modified) in claim order; `key` reads each one's order fields. */
export function inClaimOrder<T>(items: readonly T[], key: (item: T) => ClaimOrderKey): T[] {
  const keyed = items.map((item) => ({ item, k: key(item), rank: 0 }));
  keyed.sort((a, b) => comparePlain(a.k, b.k));
  const seen = new Map<string, number>();
  for (const entry of keyed) {
    // null is one more tenant; the prefix keeps it apart from every tenant name.
    const lane = `${entry.k.priority}:${entry.k.tenant === null ? '-' : `+${entry.k.tenant}`}`;
    const rank = seen.get(lane) ?? 0;
    seen.set(lane, rank + 1);
    entry.rank = rank;
  }
  keyed.sort((a, b) => a.k.priority - b.k.priority || a.rank - b.rank || comparePlain(a.k, b.k));
  return keyed.map((entry) => entry.item);
}
