-- v0.4 "The inbox stays fast": the inbox reads a principal's entries with `principal = p.principal`
-- for each of its principals (src/engine/sql/inbox.ts), in index order, stopping after a page. The
-- planner estimates such a range by the average number of entries per principal — small, when
-- most people have a few tasks — and for a small range prefers a bitmap scan that reads the WHOLE
-- range and sorts it: for a principal with 10,000 tasks, all 10,000 rows for a page of 25.
-- Telling the planner that `principal` has one distinct value makes every principal's range look
-- large, so it always walks the index in order and stops at the page's LIMIT (the plans are
-- asserted in test/e2e/inbox-scale.test.ts). Only the inbox's reads filter on `principal`; the
-- step's writes reach entries by their primary key. ANALYZE keeps this override.
ALTER TABLE "inbox_entries" ALTER COLUMN "principal" SET (n_distinct = 1);
