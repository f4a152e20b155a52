-- v0.5 "Security, round two" (issue 38 L5): SLOTFLOW_MCP_TOKEN reaches only the runs started
-- through MCP. A row here marks a run started by an MCP tool (start_run, request_approval,
-- ask_human; src/mcp/tools.ts), written before the start is submitted, so it exists whenever the
-- run does. No foreign key: the run's row is written later, by the worker. A marker whose start
-- was refused names no run and is harmless.
-- Distribution (docs/scaling.md): co-located with `runs` by `run_id`.
CREATE TABLE "mcp_runs" (
    "run_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "mcp_runs_pkey" PRIMARY KEY ("run_id")
);
