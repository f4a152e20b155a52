/**
 * Runs for operators over HTTP (issue 23; interfaces.md "Runs for operators"), admin bearer token:
 *
 *   GET  /api/runs?workflow=&version=&status=&state=&waiting=&createdAfter=&createdBefore=&limit=&cursor=
 *        200 `{runs: [{id, workflow, version, state, status, createdAt, updatedAt, endedAt,
 *        waiting: [{alias, element, status, openedAt, deadline, link}]}], nextCursor}`
 *        (operators/runs-list.ts; `openedAt`: since when an open slot waits, null while waiting);
 *        400 invalid-query naming the parameter.
 *   POST /api/runs/{id}/cancel  body `{"reason": "…"}` (1–500 characters)
 *        200 `{id, status: "cancelled"}`, applied before answering by a worker under the run lock
 *        (engine/commands/cancel.ts); 422 invalid-body without a reason; 404 not-found; 409
 *        run-finished when the run already ended; 202 `{id, status: "accepted"}` when the worker
 *        did not answer in time (it will be applied; `GET /api/runs/{id}` shows it).
 *
 * The cancel itself is `submitCancel`, shared with the console (web/console), which passes its
 * own actor.
 */
import { randomUUID } from "node:crypto";
import Router from "@koa/router";
import type { Context } from "koa";
import { CANCEL_REASON_MAX, type Outcome } from "../engine/commands/types.js";
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";
import { listRuns, parseRunsQuery } from "../operators/runs-list.js";
import type { Runtime } from "../runtime.js";
import { requireAdmin } from "./auth.js";
import { dependency } from "./dependency.js";
import { readBody } from "./request-body.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Checks an operator's reason (cancel, and the console's revoke): a string of 1–500 characters
 * after trimming; throws 422 invalid-body otherwise.
 */
export function checkReason(value: unknown): string {
  const reason = typeof value === "string" ? value.trim() : "";
  if (!reason || reason.length > CANCEL_REASON_MAX || reason.includes("\u0000")) {
    throw new RefusalError(refuse(RefusalCode.InvalidBody, `Give a reason: a string of 1 to ${CANCEL_REASON_MAX} characters.`, { expects: { reason: "string" } }));
  }
  return reason;
}

/** Submits the cancel command and waits for its outcome ("accepted" when the worker is late). */
export async function submitCancel(rt: Runtime, runId: string, reason: string, actor: string): Promise<Outcome | "accepted"> {
  if (!UUID.test(runId)) throw new RefusalError(refuse(RefusalCode.NotFound, "No run has this id."));
  const cmd = { kind: "cancel" as const, commandId: randomUUID(), runId: runId.toLowerCase(), reason, actor };
  const outcome = await dependency(rt.log, "redis", () => rt.queues.submit(cmd));
  if (outcome !== "accepted" && outcome.ok) rt.log.info({ runId: cmd.runId, actor }, "run cancelled");
  return outcome;
}

export function runsApiRouter(rt: Runtime): Router {
  const router = new Router({ prefix: "/api" });
  const admin = async (ctx: Context, next: () => Promise<unknown>) => {
    requireAdmin(ctx, rt.config.adminToken);
    await next();
  };

  router.get("/runs", admin, async (ctx) => {
    const filter = parseRunsQuery(ctx.query);
    const page = await dependency(rt.log, "database", () => listRuns(rt.db, filter));
    ctx.body = page;
  });

  router.post("/runs/:id/cancel", admin, async (ctx) => {
    const body = await readBody(ctx, "json", 16 * 1024, rt.config.limits.maxInputDepth);
    const reason = checkReason(body && typeof body === "object" ? (body as { reason?: unknown }).reason : undefined);
    const outcome = await submitCancel(rt, ctx.params.id, reason, "admin-token (api)");
    if (outcome === "accepted") {
      ctx.status = 202;
      ctx.body = { id: ctx.params.id.toLowerCase(), status: "accepted" };
      return;
    }
    if (!outcome.ok) throw new RefusalError(outcome.refusal);
    ctx.body = { id: outcome.run.id, status: "cancelled" };
  });

  return router;
}
