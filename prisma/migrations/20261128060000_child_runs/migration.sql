-- Child runs (v0.5, issue 40 item 3: `call workflow Child as x`). A child run is started in the
-- transaction of the parent's step that opened the call slot (engine/commands/child.ts).
--   runs.parent_run_id / parent_call_id: the parent run and its call (calls.id) a child answers;
--     NULL for a run started any other way. The parent's slot is the call's slot.
--   runs.call_depth: 0 for a run started any other way, the parent's + 1 for a child (at most 10).
--   calls.child_run_id: the child run a `call workflow` started; NULL for other calls and for a
--     child that could not start (the call then failed).
-- Shard-friendly: nothing references across runs by key; the child's row names its parent by value
-- (a run table distributed by id), the parent's call names its child by value.
ALTER TABLE runs ADD COLUMN parent_run_id uuid;
ALTER TABLE runs ADD COLUMN parent_call_id uuid;
ALTER TABLE runs ADD COLUMN call_depth int NOT NULL DEFAULT 0;
-- GET /api/runs?parent={runId}: the runs a run started
CREATE INDEX runs_parent_run_id_idx ON runs (parent_run_id, created_at, id) WHERE parent_run_id IS NOT NULL;
ALTER TABLE calls ADD COLUMN child_run_id uuid;
