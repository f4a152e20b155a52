/**
 * slotflow's MCP server (issue 33 item 1; docs/agents.md), built on the official TypeScript SDK
 * (`@modelcontextprotocol/sdk` v1.x, its low-level `Server`): tools/list shows TOOLS with their
 * JSON Schemas, tools/call runs tools.ts's callTool (or, with `task`, starts request_approval /
 * ask_human as an MCP task: tasks.ts). A refusal is a tool error (`isError: true`)
 * whose text is the problem as JSON with its code; anything else unexpected is logged and
 * answered as a tool error `internal` without its message (it could hold anything).
 *
 * Served over stdio by `slotflow mcp` (stdio.ts) and over Streamable HTTP at `POST /mcp` (http.ts).
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { packageVersion } from "../package.js";
import { RefusalError } from "../engine/refusals.js";
import type { Runtime } from "../runtime.js";
import { newTask, RunTaskStore, TASK_POLL_MS } from "./tasks.js";
import { callTool, problemText, TASK_TOOLS, toolsFor, type AgentIdentity, type McpScope } from "./tools.js";

/**
 * A new MCP server over `rt` (one per stdio process; one per HTTP request, which is stateless).
 * `gone`: aborted when the transport under it goes (an HTTP request closed): waits end then.
 * `scope` (tools.ts McpScope): whose runs tools and tasks reach — every run (the admin token,
 * stdio), only runs started through MCP (SLOTFLOW_MCP_TOKEN; issue 38 L5), or only the questions a
 * principal asked, and then only its three tools (tools/list shows only those: tools.ts toolsFor).
 * `caller`: who asks, for the pages and mails of request_approval / ask_human (tools.ts
 * AgentIdentity; interfaces.md v0.5 "Agents ask insiders"): `clientName` as the HTTP door carried
 * it from initialize (http.ts: a stateless server never sees initialize and a tool call in one
 * request), else the `clientInfo.name` this server got in initialize (stdio); `onBehalfOf` the
 * principal whose token the agent holds, if any.
 */
export function createMcpServer(rt: Runtime, gone?: AbortSignal, scope: McpScope = "all", caller: Partial<AgentIdentity> = {}): Server {
  const server = new Server(
    { name: "slotflow", version: packageVersion() },
    {
      // tasks (tasks.ts): tools/call of request_approval / ask_human may be a task; tasks/cancel cancels its run
      capabilities: { tools: {}, tasks: { cancel: {}, requests: { tools: { call: {} } } } },
      taskStore: new RunTaskStore(rt, scope),
      defaultTaskPollInterval: TASK_POLL_MS,
      instructions:
        "slotflow runs workflows that wait on people. Use request_approval to ask a person for a yes/no decision (a permission prompt) and ask_human for a question; both send a single-use link to the person (by mail, or to an endpoint) and wait. When they return {status: \"waiting\", runId}, call get_answer {runId} to keep waiting.",
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolsFor(scope) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const token = request.params._meta?.progressToken;
    const progress =
      token === undefined
        ? undefined
        : (n: number, message: string) => extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: n, message } });
    const signal = gone ? AbortSignal.any([extra.signal, gone]) : extra.signal;
    const agent: AgentIdentity = { clientName: caller.clientName ?? server.getClientVersion()?.name ?? null, onBehalfOf: caller.onBehalfOf ?? null };
    if (request.params.task) {
      // A task (tasks.ts): the run is started, its id is the task's. The answer to a task request
      // must be a task, so a refusal here is a JSON-RPC error (invalid params) whose data is the problem.
      if (!TASK_TOOLS.includes(request.params.name)) throw new McpError(ErrorCode.InvalidParams, `${request.params.name.slice(0, 64)} does not run as a task: call it without "task" (only ${TASK_TOOLS.join(" and ")} do).`);
      let started;
      try {
        started = await callTool(rt, request.params.name, request.params.arguments, { signal, noWait: true, scope, agent });
      } catch (err) {
        const result = refused(err);
        const problem = JSON.parse((result.content[0] as { text: string }).text) as { detail: string };
        throw new McpError(ErrorCode.InvalidParams, problem.detail, problem);
      }
      return { task: newTask(String(started.runId)) } as unknown as CallToolResult;
    }
    try {
      const result = await callTool(rt, request.params.name, request.params.arguments, { signal, progress, scope, agent });
      return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
    } catch (err) {
      return refused(err);
    }
  });
  /** A tool's failure as a tool error: a refusal with its problem, anything else logged and answered `internal`. */
  function refused(err: unknown): CallToolResult {
    if (err instanceof RefusalError) return { content: [{ type: "text", text: problemText(err) }], isError: true };
    rt.log.error({ err }, "mcp tool failed");
    return { content: [{ type: "text", text: JSON.stringify({ code: "internal", detail: "The tool failed unexpectedly; the server's log has the details." }) }], isError: true };
  }
  return server;
}
