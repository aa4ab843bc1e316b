/**
 * The asset HTTP surface, mounted by `src/http` when `thumbnails` is registered:
 *   PUT    /v1/assets/:id           raw image body (image/* or application/octet-stream) or
 *                                   multipart/form-data (first file part) -> 202 {asset_id, version, run_id, status_url}
 *   GET    /v1/assets/:id           versions, per-profile publication, run status
 *   GET    /v1/assets/:id/:profile  the published bytes, ETag = artifact hash, 304 on If-None-Match
 *   DELETE /v1/assets/:id           cancels versions still in flight, removes the publications (artifacts are collected later)
 * An upload over the limit is 413 before anything is stored (by Content-Length, or as soon as the
 * streamed body passes the limit, its partial temp file removed).
 * Asset ids are per tenant (see `assetSubject`): each route acts on the asset of the token's tenant,
 * or of `?tenant=` (an admin token, or an open server; another token naming another tenant is 403
 * `TENANT_MISMATCH`), so another tenant's asset answers as a missing one.
 */
import type { Readable } from 'node:stream';
import { Type, type Static } from '@sinclair/typebox';
import { access, actingTenant, TokenScope, acceptsMediaType, ifNoneMatch, isMultipartForm, mediaTypePattern, mediaTypeOf, multipartFile, PipelineError, uploadTooLarge, type PipelineReply, type PipelineRequest, type PipelineRoutes } from '../../index.ts';
import { createAssetService, LISTED_VERSIONS, MAX_LISTED_VERSIONS, type StartedVersion } from './asset-service.ts';
import { THUMBNAILS_PIPELINE } from './pipeline.ts';

const TENANT_DESCRIPTION = "Whose asset: an admin token (or an open server) names any tenant; another token only its own. Default: the token's tenant (none on an open server).";

/** `GET /v1/assets/:id` query: one page of versions, newest first; page with `before=<next_before>`. */
const AssetVersionsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LISTED_VERSIONS, default: LISTED_VERSIONS })),
    before: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Keyset cursor: `next_before` of the previous page.' })),
    tenant: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: TENANT_DESCRIPTION })),
  },
  { additionalProperties: false },
);
type AssetVersionsQuery = Static<typeof AssetVersionsQuery>;

/** The query of the other asset routes: only whose asset it is. */
const AssetTenantQuery = Type.Object({ tenant: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: TENANT_DESCRIPTION })) });
type AssetTenantQuery = Static<typeof AssetTenantQuery>;

const RAW_TYPES = /^(image\/[A-Za-z0-9.+-]+|application\/octet-stream)$/i;

function unsupported(type: string | undefined): PipelineError {
  return new PipelineError('UNSUPPORTED_MEDIA_TYPE', `Content-Type ${type ?? '(none)'} is not accepted: send image/*, application/octet-stream or multipart/form-data`, false);
}

/** The declared type of a raw body; octet-stream declares nothing. */
function declaredOf(type: string | undefined): string | undefined {
  return type === 'application/octet-stream' ? undefined : type;
}

function accepted(reply: PipelineReply, started: StartedVersion): PipelineReply {
  const statusUrl = `/v1/runs/${started.run.id}`;
  return reply
    .status(202)
    .header('location', `/v1/assets/${started.assetId}`)
    .send({ asset_id: started.assetId, version: started.version, run_id: started.run.id, status: started.run.status, status_url: statusUrl });
}

/** The asset routes. */
export const assetRoutes: PipelineRoutes = {
  pipeline: THUMBNAILS_PIPELINE,
  plugin: async (app, { kiln }) => {
    const limit = createAssetService(kiln).maxUploadBytes;
    /** The service acting for the request's tenant (asset ids are per tenant; see asset-service.ts). */
    const assetsOf = (request: PipelineRequest & { query: { tenant?: string } }) => createAssetService(kiln, actingTenant(request, request.query.tenant));
    // Raw bodies reach the handler as the request stream: nothing is buffered in memory.
    app.addContentTypeParser(mediaTypePattern(RAW_TYPES), (_request, payload, done) => done(null, payload));

    app.put<{ Params: { id: string }; Querystring: AssetTenantQuery }>('/v1/assets/:id', { schema: { querystring: AssetTenantQuery }, config: access(TokenScope.submit) }, async (request, reply) => {
      const assets = assetsOf(request);
      const type = mediaTypeOf(request.headers['content-type']);
      const length = Number(request.headers['content-length'] ?? Number.NaN);
      if (Number.isFinite(length) && length > limit) throw uploadTooLarge(limit);
      if (isMultipartForm(request.headers['content-type'])) {
        const file = await multipartFile(request, limit);
        return accepted(reply, await assets.upload(request.params.id, file.bytes, declaredOf(file.mediaType), undefined, request.traceparent));
      }
      if (!acceptsMediaType(RAW_TYPES, type)) throw unsupported(type);
      return accepted(reply, await assets.upload(request.params.id, request.body as Readable, declaredOf(type), undefined, request.traceparent));
    });

    app.get<{ Params: { id: string }; Querystring: AssetVersionsQuery }>('/v1/assets/:id', { schema: { querystring: AssetVersionsQuery }, config: access(TokenScope.read) }, async (request) => {
      const { tenant: _tenant, ...page } = request.query;
      return assetsOf(request).describe(request.params.id, page);
    });

    app.get<{ Params: { id: string; profile: string }; Querystring: AssetTenantQuery }>('/v1/assets/:id/:profile', { schema: { querystring: AssetTenantQuery }, config: access(TokenScope.read) }, async (request, reply) => {
      const { publication, open } = await assetsOf(request).published(request.params.id, request.params.profile);
      const etag = `"${publication.artifactRef.slice('sha256:'.length)}"`;
      // The same URL serves a newer version later: cache, but revalidate (the ETag makes that cheap).
      void reply.header('etag', etag).header('cache-control', 'no-cache').header('x-asset-version', String(publication.subjectVersion));
      // A revalidation is answered from the publication alone: the bytes are not read.
      if (ifNoneMatch(request, etag)) return reply.status(304).send();
      const { size, head, body } = await open();
      return reply.status(200).type(sniffImageType(head)).header('content-length', size).send(body);
    });

    app.delete<{ Params: { id: string }; Querystring: AssetTenantQuery }>('/v1/assets/:id', { schema: { querystring: AssetTenantQuery }, config: access(TokenScope.submit) }, async (request) => ({
      asset_id: request.params.id,
      deleted: await assetsOf(request).remove(request.params.id),
    }));
  },
};

/** Published outputs are PNG, WebP or JPEG; the bytes say which. */
function sniffImageType(bytes: Uint8Array): string {
  if (bytes[0] === 0x89 && bytes[1] === 0x50) return 'image/png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return 'image/jpeg';
  if (bytes[8] === 0x57 && bytes[9] === 0x45 && bytes[10] === 0x42 && bytes[11] === 0x50) return 'image/webp';
  return 'application/octet-stream';
}
