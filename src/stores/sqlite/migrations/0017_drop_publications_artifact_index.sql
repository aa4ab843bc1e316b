-- 0017_drop_publications_artifact_index: a publication no longer writes an index entry that no
-- read uses.
--
-- Drops: index publications_artifact (0002).
-- Why: the one statement that read it is the artifact ref scan of garbage collection, which
--   wants every publication's artifact once (sql/artifact-refs.ts) and gathers them into a set:
--   a scan of publications does the same. Each publication wrote an entry keyed by its artifact
--   ref, a sha256, so at a random page of the index: under uncached QR load about one WAL page
--   of every sixteen a request writes (issue 13).
-- Append-only once released: add a later migration instead of editing this file.

DROP INDEX publications_artifact;
