-- 0013_reserve_number_for_parallel_branch: placeholder on branch 'retention' only.
--
-- Changes nothing. Migration numbers 0011 to 0013 belong to branches developed at the same time
-- (session 17); retention's own migration is 0014, and migrations must be numbered 1..n without
-- gaps. Delete this file when the branch that owns 0013 is merged.
SELECT 1;
