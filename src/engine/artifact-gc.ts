/**
 * Artifact garbage collection: an object referenced by no publication, no cache entry and no run
 * that may still run or be replayed is removed once it is older than a grace period. The grace
 * period is what makes this safe without locks: a stage writes its artifact before its commit
 * records the reference, and a re-put refreshes the object's time, so anything written or reused
 * recently is never a candidate.
 */
import type { Clock } from '../core/clock.ts';
import type { ArtifactStore, StoredArtifact } from '../core/ports/artifact-store.ts';
import type { Store } from '../core/ports/store.ts';

/** What a collection found and did. */
export interface ArtifactGcReport {
  /** Objects in the store. */
  scanned: number;
  /** Objects something still references. */
  referenced: number;
  /** Unreferenced objects still inside the grace period. */
  young: number;
  /** Unreferenced objects past the grace period: removed, or with `dryRun` what would be. */
  collected: StoredArtifact[];
  dryRun: boolean;
}

/** Options of {@link collectArtifacts}. */
export interface ArtifactGcOptions {
  /** Only objects last written longer ago than this are candidates. */
  graceMs: number;
  /** Report candidates without removing them. */
  dryRun?: boolean;
}

/** Collects unreferenced artifacts (see the module comment). */
export async function collectArtifacts(
  deps: { store: Store; artifacts: ArtifactStore; clock: Clock },
  options: ArtifactGcOptions,
): Promise<ArtifactGcReport> {
  const dryRun = options.dryRun ?? false;
  // Objects are listed before references are read: an object written after the listing is not a
  // candidate, and one referenced before the read is kept.
  const cutoff = deps.clock.now() - options.graceMs;
  const objects: StoredArtifact[] = [];
  for await (const object of deps.artifacts.list()) objects.push(object);
  const referenced = new Set(await deps.store.artifactRefs.list());
  const report: ArtifactGcReport = { scanned: objects.length, referenced: 0, young: 0, collected: [], dryRun };
  for (const object of objects) {
    if (referenced.has(object.ref)) report.referenced++;
    else if (object.modifiedAt > cutoff) report.young++;
    else report.collected.push(object);
  }
  if (!dryRun) {
    const removed: StoredArtifact[] = [];
    // An object re-put since it was listed is live again and stays.
    for (const object of report.collected) if (await deps.artifacts.remove(object.ref, { notModifiedAfter: object.modifiedAt })) removed.push(object);
    report.collected = removed;
  }
  report.collected.sort((a, b) => a.ref.localeCompare(b.ref));
  return report;
}
