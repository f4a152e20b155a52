/**
 * The admin and engine API (bearer SLOTFLOW_ADMIN_TOKEN), and the ordinary raise path (bearer: a
 * principal's JWT). See docs/http-api.md for every status and problem type.
 */
import { bodyParser } from "@koa/bodyparser";
import Router from "@koa/router";
import type { Context } from "koa";
import { deploy, diagnosticJson } from "../engine/deploy.js";
import { prepareRaise, prepareStart } from "../engine/prepare.js";
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";
import { showOutbox, showRun } from "../engine/views.js";
import type { Runtime } from "../runtime.js";
import { requireAdmin, verifyPrincipal } from "./auth.js";
import { dependency } from "./dependency.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function adminRouter(rt: Runtime): Router {
  const router = new Router({ prefix: "/api" });
  const admin = async (ctx: Context, next: () => Promise<unknown>) => {
    requireAdmin(ctx, rt.config.adminToken);
    await next();
  };
  const json = bodyParser({ enableTypes: ["json"], jsonLimit: "1mb", jsonStrict: false });
  const text = bodyParser({ enableTypes: ["text"], textLimit: "2mb", extendTypes: { text: ["text/plain", "text/*", "application/octet-stream"] } });
  const runOr404 = async (id: string) => {
    const view = UUID.test(id) ? await showRun(rt.db, rt.sealer, id) : null;
    if (!view) throw new RefusalError(refuse(RefusalCode.NotFound, "No run has this id."));
    return view;
  };

  router.post("/workflows", admin, text, async (ctx) => {
    const source = typeof ctx.request.body === "string" ? ctx.request.body : "";
    if (!source.trim()) throw new RefusalError(refuse(RefusalCode.InvalidWorkflow, "Send the .flow source as the body (Content-Type: text/plain)."));
    const result = await deploy(rt.db, source, ctx.get("x-slotflow-filename") || "<source>");
    const warnings = result.warnings.map(diagnosticJson);
    ctx.status = result.created ? 201 : 200;
    ctx.body = { name: result.name, version: result.version, created: result.created, upgradedRuns: result.upgradedRuns, warnings };
    rt.log.info({ workflow: result.name, version: result.version, created: result.created }, "deployed");
  });

  router.get("/workflows/:name", admin, async (ctx) => {
    const wf = await rt.db.workflow.findUnique({ where: { name: ctx.params.name }, include: { versions: { orderBy: { version: "asc" } } } });
    if (!wf) throw new RefusalError(refuse(RefusalCode.NotFound, `No workflow named "${ctx.params.name}" is deployed.`));
    const current = wf.versions.find((v) => v.version === wf.currentVersion)!;
    ctx.body = {
      name: wf.name,
      currentVersion: wf.currentVersion,
      versions: wf.versions.map((v) => ({ version: v.version, sourceSha256: v.sourceSha256, createdAt: v.createdAt })),
      source: current.source,
    };
  });

  router.post("/workflows/:name/runs", admin, json, async (ctx) => {
    const prepared = await dependency(rt.log, "database", () => prepareStart(rt.db, ctx.params.name, ctx.request.body ?? {}));
    if (!prepared.ok) throw new RefusalError(prepared.refusal);
    const outcome = await dependency(rt.log, "redis", () => rt.queues.submit(prepared.cmd));
    if (outcome === "accepted") {
      ctx.status = 202;
      ctx.body = { id: prepared.cmd.runId, status: "accepted" };
      return;
    }
    if (!outcome.ok) throw new RefusalError(outcome.refusal);
    ctx.status = 201;
    ctx.body = { id: outcome.run.id, version: outcome.run.version, state: outcome.run.state, status: outcome.run.status };
  });

  router.get("/runs/:id", admin, async (ctx) => {
    ctx.body = await runOr404(ctx.params.id);
  });

  router.get("/runs/:id/outbox", admin, async (ctx) => {
    await runOr404(ctx.params.id);
    ctx.body = await showOutbox(rt.db, rt.sealer, ctx.params.id);
  });

  router.post("/runs/:id/slots/:alias/events", json, async (ctx) => {
    const principal = await verifyPrincipal(ctx, rt.config.jwtSecret);
    const rawElement = ctx.query.element;
    let element: number | null = null;
    if (rawElement !== undefined) {
      element = Number(rawElement);
      if (typeof rawElement !== "string" || !Number.isInteger(element) || element < 0) {
        throw new RefusalError(refuse(RefusalCode.NotFound, "?element must be a non-negative integer (the index of the fanned-out slot)."));
      }
    }
    const body = (ctx.request as { rawBody?: string }).rawBody?.trim() ? ctx.request.body : undefined;
    const prepared = await dependency(rt.log, "database", () => prepareRaise(rt.db, ctx.params.id, ctx.params.alias, element, body, principal));
    if (!prepared.ok) throw new RefusalError(prepared.refusal);
    const outcome = await dependency(rt.log, "redis", () => rt.queues.submit(prepared.cmd));
    if (outcome === "accepted") {
      ctx.status = 202;
      ctx.body = { status: "accepted" };
      return;
    }
    if (!outcome.ok) throw new RefusalError(outcome.refusal);
    ctx.body = { status: "completed", run: outcome.run };
  });

  return router;
}
