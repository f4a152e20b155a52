/**
 * The admin and engine API (bearer SLOTFLOW_ADMIN_TOKEN), and the ordinary raise path (bearer: a
 * principal's JWT). See docs/http-api.md for every status and problem type.
 */
import { bodyParser } from "@koa/bodyparser";
import Router from "@koa/router";
import type { Context } from "koa";
import { deploy } from "../engine/deploy.js";
import { compileOffThread } from "../lang/compile-async.js";
import { prepareRaise, prepareStart } from "../engine/prepare.js";
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";
import { showOutbox, showRun } from "../engine/views.js";
import type { Runtime } from "../runtime.js";
import { requireAdmin, verifyPrincipal } from "./auth.js";
import { dependency } from "./dependency.js";

/** A workflow name is an identifier of the flow language; anything else names no workflow (404). */
const WORKFLOW_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,199}$/;

function workflowNameOr404(name: string): void {
  if (!WORKFLOW_NAME.test(name)) throw new RefusalError(refuse(RefusalCode.NotFound, "No workflow has this name (workflow names are identifiers)."));
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function adminRouter(rt: Runtime): Router {
  const router = new Router({ prefix: "/api" });
  const admin = async (ctx: Context, next: () => Promise<unknown>) => {
    requireAdmin(ctx, rt.config.adminToken);
    await next();
  };
  const { limits } = rt.config;
  const json = bodyParser({ enableTypes: ["json"], jsonLimit: "1mb", jsonStrict: false });
  // Limits answer 413 with a detail naming the limit (issue 8 items 15–17).
  const tooLarge = (what: string, limit: number, variable: string) =>
    new RefusalError(refuse(RefusalCode.PayloadTooLarge, `${what} must be at most ${limit} bytes (${variable}).`, { limit }));
  const limited = (parser: ReturnType<typeof bodyParser>, what: string, limit: number, variable: string) => async (ctx: Context, next: () => Promise<unknown>) => {
    try {
      await parser(ctx, async () => undefined);
    } catch (err) {
      if ((err as { status?: number }).status === 413) throw tooLarge(what, limit, variable);
      throw err;
    }
    await next();
  };
  const inputJson = limited(bodyParser({ enableTypes: ["json"], jsonLimit: limits.maxInputBytes, jsonStrict: false }), "A run's input", limits.maxInputBytes, "SLOTFLOW_MAX_INPUT_BYTES");
  const text = limited(
    bodyParser({ enableTypes: ["text"], textLimit: limits.maxSourceBytes, extendTypes: { text: ["text/plain", "text/*", "application/octet-stream"] } }),
    "A .flow source",
    limits.maxSourceBytes,
    "SLOTFLOW_MAX_SOURCE_BYTES",
  );
  const runOr404 = async (id: string) => {
    const view = UUID.test(id) ? await showRun(rt.db, rt.sealer, id) : null;
    if (!view) throw new RefusalError(refuse(RefusalCode.NotFound, "No run has this id."));
    return view;
  };

  router.post("/workflows", admin, text, async (ctx) => {
    const source = typeof ctx.request.body === "string" ? ctx.request.body : "";
    if (!source.trim()) throw new RefusalError(refuse(RefusalCode.InvalidWorkflow, "Send the .flow source as the body (Content-Type: text/plain)."));
    const file = ctx.get("x-slotflow-filename") || "<source>";
    const result = await dependency(rt.log, "database", () => deploy(rt.db, source, file, { maxSourceBytes: limits.maxSourceBytes, compile: compileOffThread }));
    const warnings = result.warnings.map((d) => ({ code: d.code, severity: d.severity, message: d.message, line: d.range.start.line, column: d.range.start.column }));
    ctx.status = result.created ? 201 : 200;
    ctx.body = { name: result.name, version: result.version, created: result.created, upgradedRuns: result.upgradedRuns, warnings };
    rt.log.info({ workflow: result.name, version: result.version, created: result.created }, "deployed");
  });

  router.get("/workflows/:name", admin, async (ctx) => {
    workflowNameOr404(ctx.params.name);
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

  router.post("/workflows/:name/runs", admin, inputJson, async (ctx) => {
    workflowNameOr404(ctx.params.name);
    const prepared = await dependency(rt.log, "database", () => prepareStart(rt.db, ctx.params.name, ctx.request.body ?? {}, limits));
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
