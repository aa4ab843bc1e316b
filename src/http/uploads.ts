/**
 * Request bodies that are uploads, read the same way by every route: the one place that parses a
 * `Content-Type` (media types compare without parameters, case-insensitively) and the one place
 * that reads a multipart file part, where every framing fault of the body (no boundary, a body
 * that ends inside a part, a malformed header) is the client's: 400 `INVALID_MULTIPART`, never
 * 500. An error of the storage the bytes go to keeps its own code.
 */
import type { FastifyRequest } from 'fastify';
import { PipelineError, ValidationError } from '../core/errors.ts';

/**
 * The bare media type of a `Content-Type` value: parameters (`; charset=...`, `; boundary=...`)
 * dropped, trimmed, lower case; `undefined` when the header is absent or empty.
 */
export function mediaTypeOf(header: string | undefined): string | undefined {
  return header?.split(';')[0]?.trim().toLowerCase() || undefined;
}

/**
 * A fastify content-type parser pattern for the bare media types `bare` names (a `^(...)$`
 * pattern over bare types): fastify tests parser patterns against the whole header, parameters
 * included, so this one allows any parameters after the type, in any case.
 */
export function mediaTypePattern(bare: RegExp): RegExp {
  const source = bare.source.replace(/^\^/, '').replace(/\$$/, '');
  return new RegExp(`^(?:${source})[\\t ]*(?:;.*)?$`, 'is');
}

/** True when the bare media type of `header` is one `bare` (a pattern over bare types) names. */
export function acceptsMediaType(bare: RegExp, header: string | undefined): boolean {
  const type = mediaTypeOf(header);
  return type !== undefined && new RegExp(bare.source, 'i').test(type);
}

/** True when `header` names a multipart/form-data body (whatever its parameters and case). */
export function isMultipartForm(header: string | undefined): boolean {
  return mediaTypeOf(header) === 'multipart/form-data';
}

/** The error of an upload over `maxBytes`. */
export function uploadTooLarge(maxBytes: number): PipelineError {
  return new ValidationError(`upload is larger than ${maxBytes} bytes`, { code: 'PAYLOAD_TOO_LARGE', details: { maxBytes } });
}

/** Any fault of the multipart body as kiln's error: kiln errors stay, a size limit is 413, the rest 400. */
export function multipartError(err: unknown, maxBytes: number): PipelineError {
  if (err instanceof PipelineError) return err;
  const status = (err as { statusCode?: unknown } | null)?.statusCode;
  if (status === 413) return uploadTooLarge(maxBytes);
  const reason = err instanceof Error ? err.message : String(err);
  return new ValidationError(`the multipart body is malformed: ${reason}`, { code: 'INVALID_MULTIPART', cause: err });
}

/** The first file part of a multipart upload. */
export interface UploadedFile {
  /** The part's bytes; iterating fails with a kiln error (`INVALID_MULTIPART`, `PAYLOAD_TOO_LARGE`). */
  bytes: AsyncIterable<Uint8Array>;
  /** The part's bare media type (see {@link mediaTypeOf}), if it declared one. */
  mediaType: string | undefined;
}

/**
 * Reads the first file part of a multipart/form-data request, at most `maxBytes` of it. A part cut
 * at the limit fails (busboy would otherwise end it as if it were whole).
 */
export async function multipartFile(request: FastifyRequest, maxBytes: number): Promise<UploadedFile> {
  let file: Awaited<ReturnType<FastifyRequest['file']>>;
  try {
    file = await request.file({ limits: { fileSize: maxBytes, files: 1, fields: 10 } });
  } catch (err) {
    throw multipartError(err, maxBytes);
  }
  if (!file) throw new ValidationError('the multipart body has no file part', { code: 'INVALID_MULTIPART' });
  const stream = file.file;
  stream.once('limit', () => stream.destroy(uploadTooLarge(maxBytes)));
  async function* bytes(): AsyncIterable<Uint8Array> {
    try {
      for await (const chunk of stream as AsyncIterable<Uint8Array>) yield chunk;
    } catch (err) {
      throw stream.truncated ? uploadTooLarge(maxBytes) : multipartError(err, maxBytes);
    }
    if (stream.truncated) throw uploadTooLarge(maxBytes);
  }
  return { bytes: bytes(), mediaType: mediaTypeOf(file.mimetype) };
}
