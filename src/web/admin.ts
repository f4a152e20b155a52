/**
 * The admin and engine API (bearer SLOTFLOW_ADMIN_TOKEN), and the ordinary raise path (bearer: a
 * principal's JWT). See docs/http-api.md for every status and problem type.
 */
import Router from "@koa/router";
import type { Context } from "koa";
import { deploy } from "../engine/deploy.js";
import { prepareRaise, prepareStart } from "../engine/prepare.js";
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";
import { isStorableString, UNSTORABLE_PROBLEM, unstorablePaths } from "../engine/storable.js";
import { showOutbox, showRun } from "../engine/views.js";
import type { Runtime } from "../runtime.js";
import { requireAdmin, verifyPrincipal } from "./auth.js";
import { dependency } from "./dependency.js";
import { readBody } from "./request-body.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function adminRouter(rt: Runtime): Router {
  const router = new Router({ prefix: "/api" });
  const admin = async (ctx: Context, next: () => Promise<unknown>) => {
    requireAdmin(ctx, rt.config.adminToken);
    await next();
  };
  /** Request bodies (request-body.ts): JSON up to 1 MiB, `.flow` sources up to 2 MiB, decoded. */
  const JSON_LIMIT_BYTES = 1024 * 1024;
  const TEXT_LIMIT_BYTES = 2 * 1024 * 1024;
  // path parameters PostgreSQL cannot store (`%00`) name nothing: 404, before any query
  for (const param of ["name", "alias"]) {
    router.param(param, (value, _ctx, next) => {
      if (!isStorableString(value)) throw new RefusalError(refuse(RefusalCode.NotFound, "No such workflow or slot."));
      return next();
    });
  }
  const runOr404 = async (id: string) => {
    const view = UUID.test(id) ? await showRun(rt.db, rt.sealer, id) : null;
    if (!view) throw new RefusalError(refuse(RefusalCode.NotFound, "No run has this id."));
    return view;
  };

  router.post("/workflows", admin, async (ctx) => {
    const text = await readBody(ctx, "text", TEXT_LIMIT_BYTES);
    const source = typeof text === "string" ? text : "";
    if (!source.trim()) throw new RefusalError(refuse(RefusalCode.InvalidWorkflow, "Send the .flow source as the body (Content-Type: text/plain)."));
    if (!isStorableString(source)) throw new RefusalError(refuse(RefusalCode.InvalidWorkflow, "The source contains U+0000, which cannot be stored; remove it."));
    const result = await deploy(rt.db, source, ctx.get("x-slotflow-filename") || "<source>");
    const warnings = result.warnings.map((d) => ({ code: d.code, severity: d.severity, message: d.message, line: d.range.start.line, column: d.range.start.column }));
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

  router.post("/workflows/:name/runs", admin, async (ctx) => {
    const input = await readBody(ctx, "json", JSON_LIMIT_BYTES);
    const unstorable = unstorablePaths(input);
    if (unstorable.length > 0) {
      const errors = unstorable.map((name) => ({ name, problem: UNSTORABLE_PROBLEM }));
      throw new RefusalError(refuse(RefusalCode.InvalidBody, `The run input ${UNSTORABLE_PROBLEM}: ${unstorable.join(", ")}.`, { errors }));
    }
    const prepared = await dependency(rt.log, "database", () => prepareStart(rt.db, ctx.params.name, input === undefined ? {} : input));
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

  router.post("/runs/:id/slots/:alias/events", async (ctx) => {
    const principal = await verifyPrincipal(ctx, rt.config.jwtSecret);
    const rawElement = ctx.query.element;
    let element: number | null = null;
    if (rawElement !== undefined) {
      element = Number(rawElement);
      if (typeof rawElement !== "string" || !Number.isInteger(element) || element < 0) {
        throw new RefusalError(refuse(RefusalCode.NotFound, "?element must be a non-negative integer (the index of the fanned-out slot)."));
      }
    }
    const body = await readBody(ctx, "json", JSON_LIMIT_BYTES);
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
