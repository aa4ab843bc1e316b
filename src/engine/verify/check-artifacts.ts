/**
 * The checks that read the artifact store: every publication and every `ready` cache entry points
 * to an artifact that exists and whose bytes hash to its name, and no temp file outlived the grace.
 *
 * A publication or cache entry may move on between the page that listed it and the hashing of its
 * artifact (a newer version published, the entry rebuilt, the old artifact collected), so a
 * finding is reported only if a fresh read still points to the same artifact.
 */
import { NotFoundError, PipelineError, ValidationError } from '../../core/errors.ts';
import type { ArtifactStore } from '../../core/ports/artifact-store.ts';
import type { AuditCacheEntry } from '../../core/ports/audit.ts';
import type { Publication } from '../../core/ports/publications.ts';
import { describeDuration, forEachLimited, scanPages, type CheckContext } from './check-context.ts';
import { ViolationKind } from './verify-types.ts';

/** Artifacts hashed at once. */
const HASH_CONCURRENCY = 4;
/** Verdicts remembered per audit (many publications and cache entries share artifacts); bounded so a large store fits. */
const VERDICT_MEMORY = 10_000;

/** What is wrong with an artifact, if anything. */
type ArtifactProblem = { missing: boolean; reason: string } | null;

/** Reads and hashes artifacts, remembering recent verdicts. */
function createArtifactInspector(artifacts: ArtifactStore): (ref: string) => Promise<ArtifactProblem> {
  const verdicts = new Map<string, ArtifactProblem>();
  return async (ref) => {
    const known = verdicts.get(ref);
    if (known !== undefined) return known;
    const problem = await inspect(artifacts, ref);
    if (verdicts.size >= VERDICT_MEMORY) verdicts.clear();
    verdicts.set(ref, problem);
    return problem;
  };
}

async function inspect(artifacts: ArtifactStore, ref: string): Promise<ArtifactProblem> {
  try {
    await artifacts.get(ref, { verify: true });
    return null;
  } catch (err) {
    // A malformed ref names no artifact that can exist: as good as missing.
    if (err instanceof NotFoundError || err instanceof ValidationError) return { missing: true, reason: err.message };
    if (err instanceof PipelineError && err.code === 'ARTIFACT_CORRUPT') return { missing: false, reason: err.message };
    throw err;
  }
}

/** Every publication's artifact exists and is whole. */
export async function checkPublications(ctx: CheckContext): Promise<boolean> {
  const inspectArtifact = createArtifactInspector(ctx.artifacts);
  const checkOne = async (publication: Publication): Promise<void> => {
    const problem = await inspectArtifact(publication.artifactRef);
    if (problem === null) return;
    const { subjectId, profile, artifactRef } = publication;
    const now = await ctx.store.publications.get(subjectId, profile);
    if (now?.artifactRef !== artifactRef) return;
    ctx.report({
      kind: problem.missing ? ViolationKind.PUBLICATION_ARTIFACT_MISSING : ViolationKind.PUBLICATION_ARTIFACT_CORRUPT,
      message: `publication ${subjectId}/${profile} (version ${now.subjectVersion}) points to ${artifactRef}, ${problem.missing ? 'which does not exist' : 'whose bytes are damaged'}`,
      ids: { subjectId, profile, artifactRef },
      details: { subjectVersion: now.subjectVersion, reason: problem.reason },
    });
  };
  return scanPages(ctx, (page) => ctx.store.audit.publications(page), (items) => forEachLimited(items, HASH_CONCURRENCY, checkOne));
}

/** True while `(cache, key)` is still `ready` with `ref` in its value. */
async function stillReferences(ctx: CheckContext, entry: AuditCacheEntry, ref: string): Promise<boolean> {
  const now = await ctx.store.cache.get(entry.cache, entry.key);
  return now?.status === 'ready' && JSON.stringify(now.value).includes(ref);
}

/** Every artifact a `ready` cache entry references exists and is whole. */
export async function checkCacheEntries(ctx: CheckContext): Promise<boolean> {
  const inspectArtifact = createArtifactInspector(ctx.artifacts);
  const checkOne = async ({ entry, ref }: { entry: AuditCacheEntry; ref: string }): Promise<void> => {
    const problem = await inspectArtifact(ref);
    if (problem === null || !(await stillReferences(ctx, entry, ref))) return;
    ctx.report({
      kind: problem.missing ? ViolationKind.CACHE_ARTIFACT_MISSING : ViolationKind.CACHE_ARTIFACT_CORRUPT,
      message: `ready cache entry ${entry.cache}/${entry.key} references ${ref}, ${problem.missing ? 'which does not exist' : 'whose bytes are damaged'}`,
      ids: { cache: entry.cache, key: entry.key, artifactRef: ref },
      details: { reason: problem.reason },
    });
  };
  return scanPages(
    ctx,
    (page) => ctx.store.audit.readyCacheEntries(page),
    (entries) => forEachLimited(entries.flatMap((entry) => entry.artifactRefs.map((ref) => ({ entry, ref }))), HASH_CONCURRENCY, checkOne),
  );
}

/** No temp file was last written longer ago than the temp grace. */
export async function checkTemps(ctx: CheckContext): Promise<boolean> {
  const cutoff = ctx.clock.now() - ctx.tempGraceMs;
  let read = 0;
  for await (const temp of ctx.artifacts.listTemps()) {
    if (ctx.signal?.aborted) return false;
    read += 1;
    if (temp.modifiedAt < cutoff) {
      const ageMs = ctx.clock.now() - temp.modifiedAt;
      ctx.report({
        kind: ViolationKind.TEMP_FILE_ORPHANED,
        message: `temp file ${temp.path} (${temp.size} bytes) was last written ${describeDuration(ageMs)} ago, longer than the grace of ${describeDuration(ctx.tempGraceMs)}`,
        ids: { tempPath: temp.path },
        details: { ageMs: Math.round(ageMs), size: temp.size },
      });
    }
    if (read % 1_000 === 0) {
      ctx.scanned(read);
      read = 0;
    }
  }
  ctx.scanned(read);
  return true;
}
