/**
 * The `artifactRefs` sub-port of the PostgreSQL store: every artifact ref something may still
 * read, matched in the database (one statement, one snapshot; see sql/artifact-refs.ts) with the
 * pattern every store shares.
 */
import type { ArtifactRefsPort } from '../../core/ports/artifact-refs.ts';
import { ARTIFACT_REF_PATTERN } from '../shared/artifact-refs.ts';
import type { PgContext } from './context.ts';
import { queryRows } from './database.ts';

/** Every artifact ref something may still read (see `ArtifactRefsPort.list`); sorted, unique. */
async function listReferencedArtifacts(ctx: PgContext): Promise<string[]> {
  const rows = await queryRows<{ ref: string }>(ctx.pool, ctx.sql.artifactRefs.listReferencedArtifacts, [ARTIFACT_REF_PATTERN]);
  return rows.map((row) => row.ref);
}

/** Artifact references over the context's pool. */
export function createArtifactRefsPort(ctx: PgContext): ArtifactRefsPort {
  return ctx.port<ArtifactRefsPort>({
    list: () => listReferencedArtifacts(ctx),
  });
}
