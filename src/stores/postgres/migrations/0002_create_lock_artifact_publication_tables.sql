-- 0002_create_lock_artifact_publication_tables: storage for the lock, artifact-index and
-- publication port methods that later issues add.
--
-- Creates: locks, artifacts, publications.
-- Invariants:
--   * locks: one row per held (or last held) named lock. `fence` comes from fence_seq (0001), so
--     lock fences and job fences share one strictly increasing sequence. Only the holder of
--     `token` may renew or release; a lock whose expires_at <= now may be taken over.
--   * artifacts: index of immutable content-addressed blobs; `ref` is `sha256:<hex>` and never
--     changes meaning once written.
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
