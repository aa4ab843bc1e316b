-- 0018_reserve_number_for_parallel_branch: placeholder on branch 'retention' only.
--
-- Changes nothing. Migration numbers 0016 to 0018 belong to branches developed at the same time
-- (session 17); retention's own migration is 0019, and migrations must be numbered 1..n without
-- gaps. Delete this file when the branch that owns 0018 is merged.
SELECT 1;
