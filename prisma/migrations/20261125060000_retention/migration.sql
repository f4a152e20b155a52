-- Retention (issue 20 item 1, SLOTFLOW_RETENTION, src/engine/retention.ts): the sweeper deletes a run
-- that ended (finished or cancelled) longer ago than the retention, with every row it owns.

-- A run's rows go with it: every foreign key to runs (and links' key to slots) cascades. The purge
-- still deletes each table by name in its one statement (so it can count what went); the cascades
-- make sure no row is left behind, whatever table a later migration adds.
ALTER TABLE "slots" DROP CONSTRAINT "slots_run_id_fkey";
ALTER TABLE "slots" ADD CONSTRAINT "slots_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "links" DROP CONSTRAINT "links_run_id_fkey";
ALTER TABLE "links" ADD CONSTRAINT "links_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "links" DROP CONSTRAINT "links_slot_id_fkey";
ALTER TABLE "links" ADD CONSTRAINT "links_slot_id_fkey" FOREIGN KEY ("slot_id") REFERENCES "slots"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "entity_rows" DROP CONSTRAINT "entity_rows_run_id_fkey";
ALTER TABLE "entity_rows" ADD CONSTRAINT "entity_rows_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "history" DROP CONSTRAINT "history_run_id_fkey";
ALTER TABLE "history" ADD CONSTRAINT "history_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "incidents" DROP CONSTRAINT "incidents_run_id_fkey";
ALTER TABLE "incidents" ADD CONSTRAINT "incidents_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "outbox" DROP CONSTRAINT "outbox_run_id_fkey";
ALTER TABLE "outbox" ADD CONSTRAINT "outbox_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The purge's scan: ended runs, oldest end first (running runs are not in this index at all).
CREATE INDEX "runs_ended_finished_at_idx" ON "runs"("finished_at") WHERE "finished_at" IS NOT NULL;
-- Deleting a run's links and commands by run (links had an index by slot and by token only).
CREATE INDEX "links_run_id_idx" ON "links"("run_id");
CREATE INDEX "applied_commands_run_id_idx" ON "applied_commands"("run_id");
-- applied_commands naming no run expire after the 24 h idempotency window.
CREATE INDEX "applied_commands_orphan_applied_at_idx" ON "applied_commands"("applied_at") WHERE "run_id" IS NULL;
