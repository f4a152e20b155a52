-- Issue 34 item 3, "A 202 that survives a Redis that keeps nothing": a command whose answer is
-- 202 (the worker did not finish within SLOTFLOW_DEPOSIT_WAIT_MS) is recorded here by the web
-- process before it answers; the sweeper queues it again when its job vanished from Redis (a
-- restart without persistence, a flush, a failover that lost it) and drops the row once the
-- command was applied (applied_commands) or judged (its job finished). Applying stays exactly once
-- by command id. `data` is the command (src/engine/commands/types.ts; never a token) as stored
-- JSON: every string carrying a callback link sealed (src/engine/seal.ts). A run table: keyed by
-- (run_id, command_id), distributed by run_id (docs/scaling.md); no foreign key to runs, since a
-- start is recorded before its run exists. Rows are transient: a few seconds each.
CREATE TABLE "pending_commands" (
    "run_id"     UUID           NOT NULL,
    "command_id" TEXT           NOT NULL,
    "kind"       TEXT           NOT NULL,
    "data"       JSONB          NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "pending_commands_pkey" PRIMARY KEY ("run_id", "command_id")
);

-- The sweeper's scan: the oldest rows past the grace, in (created_at, run_id, command_id) order.
CREATE INDEX "pending_commands_created_at_run_id_command_id_idx" ON "pending_commands" ("created_at", "run_id", "command_id");
