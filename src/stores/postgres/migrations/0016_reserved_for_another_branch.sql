-- 0016_reserved_for_another_branch: a placeholder, changes nothing.
--
-- 0016 is reserved for another branch of session 17 (migrations must be numbered 1..n without a
-- gap); that branch's 0016 replaces this file when the branches are merged.

SELECT 1;
