-- 0005_drop_lock_artifact_tables: drops the two tables of 0002 that no statement reads or
-- writes. Named locks are not a store concern (single flight is cache_entries, 0003), and the
-- artifact index is the artifact store's own (its files), not a table.
--
-- Drops: tables locks, artifacts (no index, foreign key or statement refers to either).
-- Keeps: publications (0002) and everything else.
-- Invariants: none change; fence_counter (0001) keeps its value, so fences stay strictly
-- increasing across this migration.
-- Append-only once released: add 0006_... instead of editing this file.

DROP TABLE locks;
DROP TABLE artifacts;
