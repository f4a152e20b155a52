/**
 * Runs for operators over HTTP (issue 23; interfaces.md "Runs for operators"), admin bearer token:
 *
 *   GET  /api/runs?workflow=&version=&status=&state=&waiting=&parent=&createdAfter=&createdBefore=&limit=&cursor=
 *        200 `{runs: [{id, workflow, version, state, status, createdAt, updatedAt, endedAt,
 *        waiting: [{alias, element, status, openedAt, deadline, link}]}], nextCursor}`
 *        (operators/runs-list.ts; `openedAt`: since when an open slot waits, null while waiting);
 *        400 invalid-query naming the parameter.
 *   POST /api/runs/{id}/cancel  body `{"reason": "…"}` (1–500 characters)
 *        200 `{id, status: "cancelled"}`, applied before answering by a worker under the run lock
 *        (engine/commands/cancel.ts); 422 invalid-body without a reason, or with a member other
 *        than `reason` (named in `errors`, as every admin body refuses undeclared members); 404 not-found; 409
 *        run-finished when the run already ended; 202 `{id, status: "accepted"}` when the worker
 *        did not answer in time (it will be applied; `GET /api/runs/{id}` shows it).
 *
 * The cancel itself goes through the engine client (src/engine-client/), as from the console and
 * MCP; the reason's rules are src/engine-client/cancel-reason.ts.
 */
import Router from "@koa/router";
import type { Context } from "koa";
import { checkCancelBody } from "../engine-client/cancel-reason.js";
import { engineClient } from "../engine-client/client.js";
import { RefusalError } from "../engine/refusals.js";
import { listRuns, parseRunsQuery } from "../operators/runs-list.js";
import type { Runtime } from "../runtime.js";
import { requireAdmin } from "../auth/tokens.js";
import { dependency } from "../engine-client/dependency.js";
import { readBody } from "../http/request-body.js";

export function runsApiRouter(rt: Runtime): Router {
  const client = engineClient(rt);
  const router = new Router({ prefix: "/api", sensitive: true, strict: true });
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
    const reason = checkCancelBody(body);
    const result = await client.cancel(ctx.params.id, reason, "admin-token (api)");
    if (result.kind === "refused") throw new RefusalError(result.refusal);
    if (result.kind === "accepted") {
      ctx.status = 202;
      ctx.body = { id: result.runId, status: "accepted" };
      return;
    }
    ctx.body = { id: result.run.id, status: "cancelled" };
  });

  return router;
}
