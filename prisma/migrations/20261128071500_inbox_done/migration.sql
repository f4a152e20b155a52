-- The inbox's done view (v0.5, issue 43 item 4: `GET /inbox?view=done`, `GET /api/inbox?view=done`):
-- the slots a principal answered in the last 30 days, newest first. A principal's answer is
-- recorded on its slot as answered_by = {"via":"principal","id":…,"email":…} with closed_at, and no
-- other index leads with who answered: without this one, each page would scan every slot. The
-- index is partial (completed slots answered by a signed-in principal) and in page order, so a page
-- is one index range scan of at most limit + 1 entries past its keyset cursor.
CREATE INDEX slots_answered_by_principal_idx
  ON slots ((answered_by ->> 'id'), closed_at DESC, run_id DESC, id DESC)
  WHERE status = 'completed' AND (answered_by ->> 'via') = 'principal';
