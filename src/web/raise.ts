/**
 * The ordinary raise path (language reference §7; interfaces.md "People inside the company"): a
 * principal answers slot `alias` (element `element`) of run `runId` with `body`. One function for
 * every door that raises as a principal — `POST /api/runs/{id}/slots/{alias}/events` (admin.ts)
 * and the task page's form (`POST /inbox/tasks/{runId}/{alias}`, src/web/task/); a Slack answer
 * passes `via: "slack"`.
 *
 * Order: prepareRaise's early checks (404, 409 slot-closed / slot-not-open, 403 not-a-candidate,
 * 422 invalid-body), then the raise command through the worker, which checks everything again
 * under the run lock (`Candidates`, `[Authorize]` → 403 authorize-denied, `Requires` → 409
 * requires-failed worded by its `else`, `After`). Throws RefusalError for every refusal, nothing
 * changed then; 503 `unavailable` when PostgreSQL or Redis cannot be reached.
 * Answers `{status: "completed", run}` once applied, or `{status: "accepted"}` when the worker took
 * longer than SLOTFLOW_DEPOSIT_WAIT_MS (it is recorded and will be applied).
 */
import { prepareRaise } from "../engine/commands/prepare.js";
import type { PrincipalClaims, RunSummary } from "../engine/commands/types.js";
import { RefusalError } from "../engine/refusals.js";
import type { Runtime } from "../runtime.js";
import { dependency } from "../engine-client/dependency.js";

export type Raised = { status: "completed"; run: RunSummary } | { status: "accepted" };

export async function raiseAsPrincipal(
  rt: Runtime,
  target: { runId: string; alias: string; element: number | null },
  body: unknown,
  principal: PrincipalClaims,
  via: "principal" | "slack" = "principal",
): Promise<Raised> {
  const prepared = await dependency(rt.log, "database", () => prepareRaise(rt.engine, target.runId, target.alias, target.element, body, principal));
  if (!prepared.ok) throw new RefusalError(prepared.refusal);
  const cmd = via === "principal" ? prepared.cmd : { ...prepared.cmd, via };
  const outcome = await dependency(rt.log, "redis", () => rt.queues.submit(cmd));
  if (outcome === "accepted") return { status: "accepted" };
  if (!outcome.ok) throw new RefusalError(outcome.refusal);
  return { status: "completed", run: outcome.run };
}
