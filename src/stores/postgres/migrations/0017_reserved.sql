-- 0017_reserved: a placeholder. Migration numbers 0016 and 0017 were reserved (session 17) for
-- other branches; versions must run 1..n without gaps, so this branch keeps the number with a
-- no-op. At merge, the owning branch's 0017_*.sql replaces this file.
SELECT 1;
