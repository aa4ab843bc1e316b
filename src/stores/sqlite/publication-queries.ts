/**
 * The SQL of the SQLite store for publications (`publications`, migration 0002), as named
 * constants prepared once per connection by `statements.ts`.
 */

/** In: subject, profile. Out: the publication's row or nothing. */
export const SELECT_PUBLICATION = 'SELECT * FROM publications WHERE subject_id = ? AND profile = ?';

/**
 * In: subject, profile, artifact, subject version, fence (the committing job's lease fence), now.
 * Compare-and-set in one statement: changes one row when no publication exists for the pair, or
 * the stored one has a lower subject version, or the same version and a lower fence; changes
 * nothing otherwise (never to a lower version; a duplicate of the same holder is a no-op).
 */
export const PUBLISH = `
  INSERT INTO publications (subject_id, profile, artifact_ref, subject_version, fence, updated_at)
  VALUES (@subject_id, @profile, @artifact_ref, @subject_version, @fence, @now)
  ON CONFLICT (subject_id, profile) DO UPDATE SET artifact_ref = excluded.artifact_ref,
    subject_version = excluded.subject_version, fence = excluded.fence, updated_at = excluded.updated_at
  WHERE excluded.subject_version > publications.subject_version
    OR (excluded.subject_version = publications.subject_version AND excluded.fence > publications.fence)`;

/** In: subject. Out: its publications' rows by profile (the primary key's order). */
export const SELECT_PUBLICATIONS_OF_SUBJECT = 'SELECT * FROM publications WHERE subject_id = ? ORDER BY profile';

/** In: subject. Removes every publication of the subject. */
export const DELETE_PUBLICATIONS_OF_SUBJECT = 'DELETE FROM publications WHERE subject_id = ?';

/** In: subject, a JSON array of profiles. Removes the subject's publications of those profiles. */
export const DELETE_PUBLICATION_PROFILES = `
  DELETE FROM publications WHERE subject_id = ? AND profile IN (SELECT value FROM json_each(?))`;
