-- 0002_create_lock_artifact_publication_tables: publications (and two tables nothing uses).
--
-- Creates: locks, artifacts, publications. locks and artifacts never had a reader or a writer;
-- 0010 drops them.
-- Invariants:
--   * publications: (subject_id, profile) -> artifact. Changed only by compare-and-set on
--     `fence`, and never to a lower subject_version.
-- Append-only: never edit this file once released.

CREATE TABLE locks (
  name       text PRIMARY KEY,
  owner      text NOT NULL,
  token      text NOT NULL,
  fence      bigint NOT NULL,
  expires_at bigint NOT NULL
);

CREATE TABLE artifacts (
  ref        text PRIMARY KEY,
  size       bigint NOT NULL CHECK (size >= 0),
  media_type text NOT NULL,
  created_at bigint NOT NULL
);

CREATE TABLE publications (
  subject_id      text NOT NULL,
  profile         text NOT NULL,
  artifact_ref    text NOT NULL,
  subject_version bigint NOT NULL,
  fence           bigint NOT NULL,
  updated_at      bigint NOT NULL,
  PRIMARY KEY (subject_id, profile)
);
CREATE INDEX publications_artifact ON publications (artifact_ref);
