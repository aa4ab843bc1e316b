-- 0002_create_lock_artifact_publication_tables: storage for the lock, artifact-index and
-- publication port methods that later issues add.
--
-- Creates: locks, artifacts, publications.
-- Invariants:
--   * locks: one row per held (or last held) named lock. `fence` comes from fence_counter (0001),
--     so lock fences and job fences share one strictly increasing sequence. Only the holder of
--     `token` may renew or release; a lock whose expires_at <= now may be taken over.
--   * artifacts: index of immutable content-addressed blobs; `ref` is `sha256:<hex>` and never
--     changes meaning once written.
--   * publications: (subject_id, profile) -> artifact. Changed only by compare-and-set on
--     `fence`, and never to a lower subject_version.
-- Append-only: never edit this file once released.

CREATE TABLE locks (
  name       TEXT PRIMARY KEY,
  owner      TEXT NOT NULL,
  token      TEXT NOT NULL,
  fence      INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE artifacts (
  ref        TEXT PRIMARY KEY,
  size       INTEGER NOT NULL CHECK (size >= 0),
  media_type TEXT NOT NULL,
  created_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE publications (
  subject_id      TEXT NOT NULL,
  profile         TEXT NOT NULL,
  artifact_ref    TEXT NOT NULL,
  subject_version INTEGER NOT NULL,
  fence           INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  PRIMARY KEY (subject_id, profile)
) WITHOUT ROWID;
CREATE INDEX publications_artifact ON publications (artifact_ref);
