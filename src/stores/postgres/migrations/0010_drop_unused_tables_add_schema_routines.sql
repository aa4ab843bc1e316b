-- 0010_drop_unused_tables_add_schema_routines: the routine ledger, and two tables gone.
--
-- Creates: table schema_routines. Drops: tables locks and artifacts (0002), which nothing reads
-- or writes. IF EXISTS throughout, so a schema at version 9 and a fresh one end the same.
-- Invariants:
--   * schema_routines: one row per file of routines/ that migrate() applied: its name, the
--     sha256 (hex) of the text applied, and when. migrate() runs the migrations, then, in the
--     same locked transaction, every routine file whose sha256 differs from its row (or has no
--     row), and records the new sha256. A function whose arguments or results change, or that
--     goes away, needs a DROP FUNCTION in a migration first: CREATE OR REPLACE cannot do either.
--   * Every function of the schema is created by exactly one routine file.
-- Append-only once released: change these objects in a later migration.

DROP TABLE IF EXISTS locks;
DROP TABLE IF EXISTS artifacts;

CREATE TABLE schema_routines (
  name       text COLLATE "C" PRIMARY KEY,
  sha256     text NOT NULL,
  applied_at bigint NOT NULL
);
