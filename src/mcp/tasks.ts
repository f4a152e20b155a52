/**
 * MCP tasks (issue 33 item 3: "where the client supports MCP's long-running task mechanism in the
 * SDK release chosen, offer it too"; MCP specification 2025-11-25 "Tasks", experimental in SDK
 * 1.x; docs/agents.md "As a task"). A client that sends `tools/call` of request_approval or
 * ask_human with `params.task` gets a task at once instead of a blocking call; then
 * `tasks/get {taskId}` says where it stands, `tasks/result {taskId}` waits for the answer (the
 * same result the blocking call returns), `tasks/cancel {taskId}` cancels the run (not with a
 * principal's token, which cancels nothing: tools.ts McpScope).
 *
 * The task is the run: its id is the run's id, its state is read from the run (PostgreSQL) on
 * every request — nothing is kept in memory, so any web process, a restarted one, or a new
 * `slotflow mcp` answers for any task (the HTTP endpoint is stateless). Task status from the run:
 *
 *   waiting for the person          working
 *   answered, or past its deadline  completed (result: {status: "answered", …} / {status: "expired"})
 *   cancelled (tasks/cancel, an operator)  cancelled
 *
 * A task lives as long as its run (`ttl` null: runs are kept until SLOTFLOW_RETENTION purges them).
 * tasks/list is not offered (the capability says so): list_runs lists the runs.
 */
import type { Request, RequestId, Result, Task } from "@modelcontextprotocol/sdk/types.js";
import type { CreateTaskOptions, TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import { RefusalError } from "../engine/refusals.js";
import type { Runtime } from "../runtime.js";
import { engineClient } from "../engine-client/client.js";
import { showRunOr404 } from "../engine-client/views.js";
import { BUILTINS } from "./builtins.js";
import { answerOf, mcpRunOr404, type McpScope } from "./tools.js";

/** How often a client should poll tasks/get, and how often tasks/result reads the run, ms. */
export const TASK_POLL_MS = 2000;

/** The task of built-in run `runId` (or null: no such run, or not a run of request_approval / ask_human). */
async function taskOf(rt: Runtime, runId: string, scope: McpScope): Promise<{ task: Task; result: Record<string, unknown> | null } | null> {
  let view;
  try {
    await mcpRunOr404(rt, runId, scope);
    view = await showRunOr404(rt, runId);
  } catch (err) {
    if (err instanceof RefusalError && err.code === "not-found") return null;
    throw err;
  }
  if (!BUILTINS.some((b) => b.name === view.workflow)) return null;
  const answer = answerOf(view);
  const status: Task["status"] = answer === null ? "working" : answer.status === "cancelled" ? "cancelled" : "completed";
  const createdAt = new Date(view.createdAt as unknown as string | Date).toISOString();
  const updated = view.finishedAt ? new Date(view.finishedAt as unknown as string | Date).toISOString() : createdAt;
  return {
    task: { taskId: view.id, status, ttl: null, createdAt, lastUpdatedAt: updated, pollInterval: TASK_POLL_MS, ...(answer === null ? { statusMessage: "Waiting for the person's answer." } : {}) },
    result: answer,
  };
}

/** A task for a run just started by a tool (server.ts), as `tools/call` with `task` answers it. */
export function newTask(runId: string): Task {
  const now = new Date().toISOString();
  return { taskId: runId, status: "working", ttl: null, createdAt: now, lastUpdatedAt: now, pollInterval: TASK_POLL_MS, statusMessage: "Waiting for the person's answer." };
}

/**
 * The SDK's TaskStore over the runs (see the module header). Tasks are made by the tools, which
 * start the run first (server.ts): `createTask` is never the way in, and refuses.
 */
export class RunTaskStore implements TaskStore {
  /** `scope` (tools.ts McpScope): SLOTFLOW_MCP_TOKEN's tasks are only runs started through MCP (issue 38 L5); a principal's, only the questions it asked. */
  constructor(
    private readonly rt: Runtime,
    private readonly scope: McpScope = "all",
  ) {}

  createTask(_params: CreateTaskOptions, _requestId: RequestId, request: Request): Promise<Task> {
    return Promise.reject(new Error(`${request.method} cannot create a task here: request_approval and ask_human do, by starting their run`));
  }

  async getTask(taskId: string): Promise<Task | null> {
    return (await taskOf(this.rt, taskId, this.scope))?.task ?? null;
  }

  /** The run holds the result: nothing to store. */
  async storeTaskResult(): Promise<void> {}

  /** The tool's result: the answer as the blocking call returns it. Called once the task is terminal. */
  async getTaskResult(taskId: string): Promise<Result> {
    const found = await taskOf(this.rt, taskId, this.scope);
    if (!found?.result) throw new Error(`task ${taskId.slice(0, 64)} has no result yet`);
    return { content: [{ type: "text", text: JSON.stringify(found.result) }], structuredContent: found.result };
  }

  /** `cancelled` (tasks/cancel) cancels the run, with the reason recorded in its history; other changes come from the run. */
  async updateTaskStatus(taskId: string, status: Task["status"]): Promise<void> {
    if (status !== "cancelled") return;
    await mcpRunOr404(this.rt, taskId, this.scope);
    // a principal's token cancels nothing (tools.ts PRINCIPAL_TOOLS: no cancel_run, so no tasks/cancel either)
    if (typeof this.scope === "object") throw new Error("tasks/cancel is not offered to a principal's token: an operator or SLOTFLOW_MCP_TOKEN cancels a run");
    const result = await engineClient(this.rt).cancel(taskId, "The agent cancelled its MCP task.", "mcp");
    if (result.kind === "refused") throw new RefusalError(result.refusal);
  }

  listTasks(): Promise<{ tasks: Task[]; nextCursor?: string }> {
    return Promise.reject(new Error("tasks/list is not offered: list_runs lists the runs"));
  }
}
