-- v0.5 "Agents ask insiders" (interfaces.md: pages and mails name on whose behalf an agent asks):
-- `POST /mcp` also takes a principal's bearer token. A run such a session starts is marked with
-- the principal's id, and that session's get_answer (and its MCP tasks) reach only runs marked with
-- it (src/mcp/tools.ts McpScope). Null: started with SLOTFLOW_MCP_TOKEN or the admin token.
ALTER TABLE "mcp_runs" ADD COLUMN "asked_by" TEXT;
