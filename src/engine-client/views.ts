/**
 * What several doors show of a run the same way (issue 39 item 1: MCP imports no web/ module):
 * a run as `GET /api/runs/{id}` shows it (tokens redacted, engine/views/views.ts), and a start's
 * answer as `POST /api/workflows/{name}/runs` and the MCP tool start_run give it.
 */
import { RUN_ID } from "../engine/commands/prepare.js";
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";
import { showRun, type RunView } from "../engine/views/views.js";
import type { Runtime } from "../runtime.js";
import { dependency } from "./dependency.js";
import type { Accepted, Applied } from "./result.js";

/**
 * A run as `GET /api/runs/{id}` shows it; throws RefusalError 404 not-found for an id that is not
 * a UUID or names no run, 503 unavailable when the database cannot answer (issue 17). Shared by
 * the admin API (web/admin.ts) and the MCP tools get_run and the task store (src/mcp/).
 */
export async function showRunOr404(rt: Runtime, id: string): Promise<RunView> {
  const view = RUN_ID.test(id) ? await dependency(rt.log, "database", () => showRun(rt.db, rt.sealer, id)) : null;
  if (!view) throw new RefusalError(refuse(RefusalCode.NotFound, "No run has this id."));
  return view;
}

/** What a start answers: the run as it stands once applied, or `accepted` when the worker was late (it will be applied). */
export type Started = { id: string; version: number; state: string; status: string } | { id: string; status: "accepted" };

/** A start's result (not refused) as the API and MCP answer it. */
export function startedView(result: Applied | Accepted): Started {
  if (result.kind === "accepted") return { id: result.runId, status: "accepted" };
  return { id: result.run.id, version: result.run.version, state: result.run.state, status: result.run.status };
}
