-- The runs list for operators (issue 23, src/operators/runs-list.ts): newest first, keyset-paginated
-- by (created_at, id), with filters on workflow, status, state and the alias a run waits on.
CREATE INDEX "runs_created_at_id_idx" ON "runs"("created_at", "id");
CREATE INDEX "runs_workflow_name_created_at_id_idx" ON "runs"("workflow_name", "created_at", "id");
CREATE INDEX "runs_status_created_at_id_idx" ON "runs"("status", "created_at", "id");
CREATE INDEX "runs_workflow_name_state_created_at_id_idx" ON "runs"("workflow_name", "state", "created_at", "id");
-- Open and waiting slots only (closed slots leave the index): `?waiting=ALIAS`.
CREATE INDEX "slots_live_alias_run_id_idx" ON "slots"("alias", "run_id") WHERE "status" IN ('open', 'waiting');
