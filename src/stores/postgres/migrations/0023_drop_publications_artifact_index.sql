-- 0023_drop_publications_artifact_index: a publication no longer writes an index entry that no
-- read uses.
--
-- Runs with search_path set to the store's schema (see 0001).
-- Drops: index publications_artifact (0002).
-- Why: no statement reads it. The artifact ref scan of garbage collection (sql/artifact-refs.ts)
--   reads every publication's artifact in a UNION with the other places refs sit, which reads the
--   table; each publication still wrote an entry keyed by its artifact ref, a sha256, so at a
--   random page of the index (issue 13: fewer writes per job).
-- Append-only once released: change these objects in a later migration.

DROP INDEX publications_artifact;
