/**
 * The SQL of the `publications` sub-port (`publications`, migration 0002), and the
 * compare-and-set a completion's commit applies to them (`PUBLISH`).
 */
import type { PublicationRow } from '../../shared/row-mapping.ts';
import type { SqliteDatabase } from '../connection.ts';

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

/** Values bound by `PUBLISH`. */
export type PublishParams = Omit<PublicationRow, 'updated_at'> & { now: number };

/** Prepares the statements of publications; the schema must be migrated first. */
export function preparePublicationsStatements(db: SqliteDatabase) {
  return {
    selectPublication: db.prepare<[subjectId: string, profile: string], PublicationRow>(SELECT_PUBLICATION),
    selectPublicationsOfSubject: db.prepare<[subjectId: string], PublicationRow>(SELECT_PUBLICATIONS_OF_SUBJECT),
    deletePublicationsOfSubject: db.prepare<[subjectId: string]>(DELETE_PUBLICATIONS_OF_SUBJECT),
    deletePublicationProfiles: db.prepare<[subjectId: string, profilesJson: string]>(DELETE_PUBLICATION_PROFILES),
    publish: db.prepare<PublishParams>(PUBLISH),
  };
}
