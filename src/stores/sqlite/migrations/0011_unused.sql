-- 0011_unused: changes nothing.
--
-- Migrations are numbered 1..n without a gap; 0011 was reserved for a change that needed no
-- migration after all (per-tenant keys live in the ids themselves).

SELECT 1;
