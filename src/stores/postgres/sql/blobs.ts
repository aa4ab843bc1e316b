/**
 * Statements of the `blobs` sub-port: small content-addressed objects (`blobs`, migration 0021).
 */
import { nowFrom, statement, type Statement } from '../database.ts';

/**
 * In: now, ref, media type, bytes. Inserts the blob, or on an existing ref only sets modified_at
 * (its bytes and media type are kept: same ref, same content). One statement: concurrent puts of
 * one ref meet on its unique key.
 */
export const putBlob = (s: string): Statement =>
  statement(
    'put_blob',
    `INSERT INTO ${s}.blobs (ref, media_type, size, bytes, modified_at)
     VALUES ($2, $3, octet_length($4::bytea), $4::bytea, ${nowFrom(1)})
     ON CONFLICT (ref) DO UPDATE SET modified_at = EXCLUDED.modified_at`,
  );

/** In: ref. Out: the blob's bytes and media type, or nothing. */
export const getBlob = (s: string): Statement => statement('get_blob', `SELECT bytes, media_type FROM ${s}.blobs WHERE ref = $1`);

/** In: ref. Out: one row, `found`. */
export const hasBlob = (s: string): Statement => statement('has_blob', `SELECT EXISTS (SELECT 1 FROM ${s}.blobs WHERE ref = $1) AS found`);

/** Out: every blob's ref, size and modified_at, by ref (byte order). */
export const listBlobs = (s: string): Statement => statement('list_blobs', `SELECT ref, size, modified_at FROM ${s}.blobs ORDER BY ref`);

/**
 * In: ref, not-modified-after (ms, may be fractional) or null for none. Out: one row per deleted
 * blob (at most one).
 */
export const removeBlob = (s: string): Statement =>
  statement('remove_blob', `DELETE FROM ${s}.blobs WHERE ref = $1 AND ($2::float8 IS NULL OR modified_at <= $2::float8) RETURNING ref`);
