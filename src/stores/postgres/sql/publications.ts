/**
 * Statements of the `publications` sub-port: the pointer `(subject, profile) -> artifact`
 * consumers read. They are set only inside `commit`, by compare-and-set (`apply_publications`,
 * routines/publications.sql); here they are read, and removed when their subject is deleted.
 */
import { statement, type Statement } from '../database.ts';

/** In: subject id, profile. Out: the publication's row or nothing. */
export const getPublication = (s: string): Statement =>
  statement(
    'get_publication',
    `SELECT subject_id, profile, artifact_ref, subject_version, fence, updated_at
     FROM ${s}.publications WHERE subject_id = $1 AND profile = $2`,
  );

/** In: subject id. Out: its publications' rows by profile (byte order: profile is COLLATE "C"). */
export const listPublications = (s: string): Statement =>
  statement(
    'list_publications',
    `SELECT subject_id, profile, artifact_ref, subject_version, fence, updated_at
     FROM ${s}.publications WHERE subject_id = $1 ORDER BY profile`,
  );

/**
 * In: subject id, profiles (text[], or NULL for every profile). Out: one row: how many of the
 * subject's publications were removed (found by the primary key's leading column).
 */
export const deletePublications = (s: string): Statement =>
  statement(
    'delete_publications',
    `
WITH gone AS (
  DELETE FROM ${s}.publications
  WHERE subject_id = $1 AND ($2::text[] IS NULL OR profile = ANY ($2::text[]))
  RETURNING 1
)
SELECT count(*)::int AS deleted FROM gone`,
  );
