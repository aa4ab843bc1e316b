/**
 * Statements on publications (migrations 0002, 0007): the pointer `(subject, profile) -> artifact`
 * consumers read. They are written only inside `commit` (the `apply_publications` function of
 * 0007, by compare-and-set); here they are read.
 */
import { statement, type Statement } from '../database.ts';

/** In: subject id, profile. Out: the publication's row or nothing. */
export const getPublication = (s: string): Statement =>
  statement(
    'get_publication',
    `SELECT subject_id, profile, artifact_ref, subject_version, fence, updated_at
     FROM ${s}.publications WHERE subject_id = $1 AND profile = $2`,
  );
