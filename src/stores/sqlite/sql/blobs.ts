/**
 * The SQL of the `blobs` sub-port: small content-addressed objects (`blobs`, migration 0016).
 */
import type { SqliteDatabase } from '../connection.ts';

/** A row of `blobs` without its bytes. */
export interface BlobEntryRow {
  ref: string;
  size: number;
  modified_at: number;
}

/**
 * In: ref, media type, size, bytes, now. Inserts the blob, or on an existing ref only sets
 * modified_at (the stored bytes and media type are kept: same ref, same content).
 */
export const UPSERT_BLOB = `
  INSERT INTO blobs (ref, media_type, size, bytes, modified_at)
  VALUES (@ref, @media_type, @size, @bytes, @now)
  ON CONFLICT (ref) DO UPDATE SET modified_at = excluded.modified_at`;

/** In: ref. Out: the blob's bytes and media type, or nothing. */
export const SELECT_BLOB = 'SELECT bytes, media_type FROM blobs WHERE ref = ?';

/** In: ref. Out: one row when the blob exists. */
export const SELECT_BLOB_EXISTS = 'SELECT 1 AS found FROM blobs WHERE ref = ?';

/** Out: every blob's ref, size and modified_at, by ref. */
export const SELECT_BLOB_ENTRIES = 'SELECT ref, size, modified_at FROM blobs ORDER BY ref';

/** In: ref, not_modified_after (a number; +Infinity for none). Deletes the row unless written after it. */
export const DELETE_BLOB = 'DELETE FROM blobs WHERE ref = @ref AND modified_at <= @not_modified_after';

/** Prepares the statements of blobs; the schema must be migrated first. */
export function prepareBlobsStatements(db: SqliteDatabase) {
  return {
    upsertBlob: db.prepare<{ ref: string; media_type: string; size: number; bytes: Buffer; now: number }>(UPSERT_BLOB),
    selectBlob: db.prepare<[ref: string], { bytes: Buffer; media_type: string }>(SELECT_BLOB),
    selectBlobExists: db.prepare<[ref: string], { found: number }>(SELECT_BLOB_EXISTS),
    selectBlobEntries: db.prepare<[], BlobEntryRow>(SELECT_BLOB_ENTRIES),
    deleteBlob: db.prepare<{ ref: string; not_modified_after: number }>(DELETE_BLOB),
  };
}
