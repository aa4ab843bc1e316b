/**
 * Artifact endpoints: a subject's publications and the bytes of any artifact by its ref, so the
 * dashboard (and anyone) can link outputs and publications to what they point at.
 */
import type { FastifyPluginAsync } from 'fastify';
import { NotFoundError } from '../../core/errors.ts';
import { TokenScope } from '../../core/ports/tokens.ts';
import type { Kiln } from '../../engine/kiln-types.ts';
import { access } from '../auth.ts';
import { publicationView } from '../operator-views.ts';
import { ArtifactParams, ArtifactQuery, PublicationsQuery } from '../schemas/operator.ts';
import { tenantKey, tenantLocal } from '../../core/tenant-keys.ts';
import { canSee, viewerTenant, type TenancyRequest } from '../tenancy.ts';

/** Options of {@link artifactRoutes}. */
export interface ArtifactRoutesOptions {
  kiln: Kiln;
}

const SIGNATURES: readonly { type: string; bytes: readonly number[]; at?: number }[] = [
  { type: 'image/png', bytes: [0x89, 0x50, 0x4e, 0x47] },
  { type: 'image/jpeg', bytes: [0xff, 0xd8, 0xff] },
  { type: 'image/gif', bytes: [0x47, 0x49, 0x46, 0x38] },
  { type: 'image/webp', bytes: [0x57, 0x45, 0x42, 0x50], at: 8 },
  { type: 'image/avif', bytes: [0x66, 0x74, 0x79, 0x70, 0x61, 0x76, 0x69, 0x66], at: 4 },
];

/**
 * The media type of an artifact's bytes: common image formats by signature, SVG and JSON by their
 * first characters, anything else `application/octet-stream` (the store keeps no type it trusts).
 */
export function sniffMediaType(bytes: Uint8Array): string {
  for (const { type, bytes: sig, at = 0 } of SIGNATURES) {
    if (sig.every((b, i) => bytes[at + i] === b)) return type;
  }
  const head = new TextDecoder().decode(bytes.subarray(0, 512)).trimStart();
  if (head.startsWith('<svg') || (head.startsWith('<?xml') && head.includes('<svg'))) return 'image/svg+xml';
  if (head.startsWith('{') || head.startsWith('[')) return 'application/json';
  return 'application/octet-stream';
}

/**
 * Whether a request may read artifact `ref`: always on an open server or with an admin token;
 * a non-admin token only through something of its own tenant that holds the ref (`?run=`: the
 * run's input or a stage output; `?subjectId=`: a publication of its subject). Anything else is
 * the 404 of a missing artifact, so a tenant cannot probe another's content by hash.
 */
async function mayRead(kiln: Kiln, request: TenancyRequest, ref: string, query: ArtifactQuery): Promise<boolean> {
  const viewer = viewerTenant(request);
  if (viewer === null) return true;
  if (query.run !== undefined) {
    const detail = await kiln.getRun(query.run).catch((err: unknown) => {
      if (err instanceof NotFoundError) return null;
      throw err;
    });
    if (detail && canSee(request, detail.run.tenant) && JSON.stringify([detail.run.input, detail.stages.map((s) => s.output)]).includes(ref)) return true;
  }
  if (query.subjectId !== undefined) {
    const publications = await kiln.listPublications(tenantKey(viewer, query.subjectId));
    if (publications.some((p) => p.artifactRef === ref)) return true;
  }
  return false;
}

/**
 * Registers `GET /v1/publications?subjectId=` (every publication of a subject, with the URL of its
 * artifact) and `GET /v1/artifacts/:ref` (the immutable bytes of `sha256:<hex>`, verified against
 * their hash; 404 when absent).
 */
export const artifactRoutes: FastifyPluginAsync<ArtifactRoutesOptions> = async (app, { kiln }) => {
  app.get<{ Querystring: PublicationsQuery }>('/v1/publications', { schema: { querystring: PublicationsQuery }, config: access(TokenScope.read) }, async (request) => {
    // A non-admin token names its own subjects (see tenancy.ts) and sees them as it named them.
    const viewer = viewerTenant(request);
    const publications = await kiln.listPublications(tenantKey(viewer, request.query.subjectId));
    return publications.map((p) => publicationView({ ...p, subjectId: tenantLocal(viewer, p.subjectId) }));
  });

  app.get<{ Params: ArtifactParams; Querystring: ArtifactQuery }>('/v1/artifacts/:ref', { schema: { params: ArtifactParams, querystring: ArtifactQuery }, config: access(TokenScope.read) }, async (request, reply) => {
    if (!(await mayRead(kiln, request, request.params.ref, request.query))) throw new NotFoundError('artifact', request.params.ref);
    const bytes = await kiln.artifacts.get(request.params.ref, { verify: true });
    return reply
      .type(sniffMediaType(bytes))
      .header('etag', `"${request.params.ref.slice('sha256:'.length)}"`)
      .header('cache-control', 'public, max-age=31536000, immutable')
      // Artifacts are data, never a page of this origin: an SVG opened directly runs no script.
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox")
      .header('x-content-type-options', 'nosniff')
      .send(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  });
};
