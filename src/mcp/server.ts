/**
 * slotflow's MCP server (issue 33 item 1; docs/agents.md), built on the official TypeScript SDK
 * (`@modelcontextprotocol/sdk` v1.x, its low-level `Server`): tools/list shows TOOLS with their
 * JSON Schemas, tools/call runs tools.ts's callTool. A refusal is a tool error (`isError: true`)
 * whose text is the problem as JSON with its code; anything else unexpected is logged and
 * answered as a tool error `internal` without its message (it could hold anything).
 *
 * Served over stdio by `slotflow mcp` (stdio.ts) and over Streamable HTTP at `POST /mcp` (http.ts).
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { packageVersion } from "../package.js";
import { RefusalError } from "../engine/refusals.js";
import type { Runtime } from "../runtime.js";
import { callTool, problemText, TOOLS } from "./tools.js";

/**
 * A new MCP server over `rt` (one per stdio process; one per HTTP request, which is stateless).
 * `gone`: aborted when the transport under it goes (an HTTP request closed): waits end then.
 */
export function createMcpServer(rt: Runtime, gone?: AbortSignal): Server {
  const server = new Server(
    { name: "slotflow", version: packageVersion() },
    {
      capabilities: { tools: {} },
      instructions:
        "slotflow runs workflows that wait on people. Use request_approval to ask a person for a yes/no decision (a permission prompt) and ask_human for a question; both mail a single-use link to the person and wait. When they return {status: \"waiting\", runId}, call get_answer {runId} to keep waiting.",
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const token = request.params._meta?.progressToken;
    const progress =
      token === undefined
        ? undefined
        : (n: number, message: string) => extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: n, message } });
    try {
      const result = await callTool(rt, request.params.name, request.params.arguments, { signal: gone ? AbortSignal.any([extra.signal, gone]) : extra.signal, progress });
      return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
    } catch (err) {
      if (err instanceof RefusalError) return { content: [{ type: "text", text: problemText(err) }], isError: true };
      rt.log.error({ err, tool: request.params.name }, "mcp tool failed");
      return { content: [{ type: "text", text: JSON.stringify({ code: "internal", detail: "The tool failed unexpectedly; the server's log has the details." }) }], isError: true };
    }
  });
  return server;
}
