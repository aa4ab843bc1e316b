-- 0020_reserved_for_sqlclaim: changes nothing.
--
-- Migrations are numbered 1..n without a gap; 0020 is reserved for another branch of the same
-- session (sqlclaim: 0020_derive_stage_leases_from_jobs). When both are merged, that branch's
-- 0020 replaces this file.

SELECT 1;
