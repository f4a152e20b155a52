/**
 * The admin and engine API (bearer SLOTFLOW_ADMIN_TOKEN), and the ordinary raise path (bearer: a
 * principal's JWT). See docs/http-api.md for every status and problem type.
 */
import Router from "@koa/router";
import type { Context } from "koa";
import { deploy, diagnosticJson } from "../engine/versions/deploy.js";
import { compileOffThread } from "../lang/compile-async.js";
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";
import { isStorableString } from "../json/storable.js";
import { showOutbox } from "../engine/views/views.js";
import { showDeliveries } from "../outbox/deliveries-view.js";
import { announceDeploy, type Runtime } from "../runtime.js";
import { requireAdmin } from "../auth/tokens.js";
import { csrfOk, requirePrincipal } from "./identity/signed-in.js";
import { engineClient, WORKFLOW_NAME } from "../engine-client/client.js";
import { dependency } from "../engine-client/dependency.js";
import { showRunOr404, startedView } from "../engine-client/views.js";
import { readBody } from "../http/request-body.js";
import { deployedSignatures } from "./signatures.js";

function workflowNameOr404(name: string): void {
  if (!WORKFLOW_NAME.test(name)) throw new RefusalError(refuse(RefusalCode.NotFound, "No workflow has this name (workflow names are identifiers)."));
}

export function adminRouter(rt: Runtime): Router {
  const client = engineClient(rt);
  const router = new Router({ prefix: "/api", sensitive: true, strict: true });
  const admin = async (ctx: Context, next: () => Promise<unknown>) => {
    requireAdmin(ctx, rt.config.adminToken);
    await next();
  };
  const { limits } = rt.config;
  /** Raise bodies (request-body.ts): JSON up to 1 MiB, decoded. */
  const JSON_LIMIT_BYTES = 1024 * 1024;
  /**
   * Reads a body with request-body.ts's rules; over `limit` it answers 413 with a detail naming
   * the limit and its variable, and a `limit` member (issue 8 items 15–17).
   */
  const limitedBody = async (ctx: Context, kind: "json" | "text", what: string, limit: number, variable: string): Promise<unknown> => {
    try {
      return await readBody(ctx, kind, limit, limits.maxInputDepth);
    } catch (err) {
      if (err instanceof RefusalError && err.code === RefusalCode.PayloadTooLarge) {
        throw new RefusalError(refuse(RefusalCode.PayloadTooLarge, `${what} must be at most ${limit} bytes (${variable}).`, { limit }));
      }
      throw err;
    }
  };
  /**
   * A slot alias PostgreSQL cannot store (`%00`) names nothing: 404 before any query. Called in each
   * handler after authentication (issue 16 item 2: a request without valid credentials gets 401
   * before anything is looked up or judged); workflow names are checked by workflowNameOr404.
   */
  const aliasOr404 = (alias: string): void => {
    if (!isStorableString(alias)) throw new RefusalError(refuse(RefusalCode.NotFound, "No such slot."));
  };
  const runOr404 = (id: string) => showRunOr404(rt, id);

  router.post("/workflows", admin, async (ctx) => {
    const text = await limitedBody(ctx, "text", "A .flow source", limits.maxSourceBytes, "SLOTFLOW_MAX_SOURCE_BYTES");
    const source = typeof text === "string" ? text : "";
    if (!source.trim()) throw new RefusalError(refuse(RefusalCode.InvalidWorkflow, "Send the .flow source as the body (Content-Type: text/plain)."));
    // a NUL in the source is a diagnostic (FLOW009) at its line and column, from the compiler
    const file = ctx.get("x-slotflow-filename") || "<source>";
    const result = await dependency(rt.log, "database", () => deploy(rt.db, source, file, {
      maxSourceBytes: limits.maxSourceBytes,
      compile: compileOffThread,
      upgrade: { sealer: rt.sealer, baseUrl: rt.config.baseUrl, limits },
      refuseTaskCalls: rt.config.nodeEnv === "production" && rt.config.workerTokens.length === 0,
    }));
    await announceDeploy(rt, result.name);
    const warnings = result.warnings.map(diagnosticJson);
    ctx.status = result.created ? 201 : 200;
    ctx.body = { name: result.name, version: result.version, created: result.created, upgradedRuns: result.upgradedRuns, warnings };
    rt.log.info({ workflow: result.name, version: result.version, created: result.created }, "deployed");
  });

  /**
   * Read-only (issue 41 item 1, for `slotflow types --url`): every deployed workflow's name, current
   * version and signature — what a caller sees of it (src/sdk/types.ts: input, entities, events
   * with constraints, result, terminal states, slots); never its source or compiled form.
   */
  router.get("/workflows", admin, async (ctx) => {
    const signatures = await deployedSignatures(rt);
    ctx.body = { workflows: signatures.map((s) => ({ name: s.name, currentVersion: s.version, signature: s })) };
  });

  router.get("/workflows/:name", admin, async (ctx) => {
    workflowNameOr404(ctx.params.name);
    // never every version's compiled form (JSON ~25× its source, parsed on this event loop): the list, then one source
    const wf = await rt.db.workflow.findUnique({
      where: { name: ctx.params.name },
      include: { versions: { orderBy: { version: "asc" }, select: { version: true, sourceSha256: true, createdAt: true } } },
    });
    if (!wf) throw new RefusalError(refuse(RefusalCode.NotFound, `No workflow named "${ctx.params.name}" is deployed.`));
    const current = await rt.db.workflowVersion.findUniqueOrThrow({
      where: { workflowName_version: { workflowName: wf.name, version: wf.currentVersion } },
      select: { source: true },
    });
    ctx.body = {
      name: wf.name,
      currentVersion: wf.currentVersion,
      versions: wf.versions.map((v) => ({ version: v.version, sourceSha256: v.sourceSha256, createdAt: v.createdAt })),
      source: current.source,
    };
  });

  router.post("/workflows/:name/runs", admin, async (ctx) => {
    workflowNameOr404(ctx.params.name);
    // Unstorable characters (U+0000, lone surrogates) are refused by the input check, naming the path.
    const input = await limitedBody(ctx, "json", "A run's input", limits.maxInputBytes, "SLOTFLOW_MAX_INPUT_BYTES");
    const result = await client.start(ctx.params.name, input === undefined ? {} : input);
    if (result.kind === "refused") throw new RefusalError(result.refusal);
    ctx.status = result.kind === "accepted" ? 202 : 201;
    ctx.body = startedView(result);
  });

  router.get("/runs/:id", admin, async (ctx) => {
    ctx.body = await runOr404(ctx.params.id);
  });

  router.get("/runs/:id/outbox", admin, async (ctx) => {
    await runOr404(ctx.params.id);
    // mail first as before, then deliveries of send webhook / send message (issue 18), each marked by `channel`
    ctx.body = [...(await showOutbox(rt.db, rt.sealer, ctx.params.id)), ...(await showDeliveries(rt.db, ctx.params.id))];
  });

  // The ordinary raise path: whoever signedIn() finds (a session, an HS256 JWT, or the issuer's JWT);
  // 401 for nobody. A browser session must also send its CSRF token as X-CSRF-Token (403 csrf-refused).
  router.post("/runs/:id/slots/:alias/events", async (ctx) => {
    const who = await requirePrincipal(ctx, rt);
    if (!csrfOk(who, ctx.get("x-csrf-token"))) {
      throw new RefusalError(refuse(RefusalCode.CsrfRefused, "A raise from a signed-in browser needs its session's CSRF token as the X-CSRF-Token header."));
    }
    const principal = who.principal;
    aliasOr404(ctx.params.alias);
    const element = elementOf(ctx.query.element);
    const body = await readBody(ctx, "json", JSON_LIMIT_BYTES, limits.maxInputDepth);
    const result = await client.raise({ runId: ctx.params.id, alias: ctx.params.alias, element }, body, principal);
    if (result.kind === "refused") throw new RefusalError(result.refusal);
    if (result.kind === "accepted") {
      ctx.status = 202;
      ctx.body = { status: "accepted" };
      return;
    }
    ctx.body = { status: "completed", run: result.run };
  });

  /**
   * An operator ends one slot's live link (issue 10 §2): applied by a worker under the run lock like
   * every command (src/engine/commands/revoke.ts). 200 `{revoked: true}`; 404 not-found when the run,
   * the slot or a live link is missing. `?element=N` names one element of a fanned-out slot, whose
   * own link (minted in `each { … }`, v0.4 Many responders) is revoked alone.
   */
  router.post("/runs/:id/slots/:alias/link/revoke", admin, async (ctx) => {
    aliasOr404(ctx.params.alias);
    const element = elementOf(ctx.query.element);
    const result = await client.revoke(ctx.params.id, ctx.params.alias, { element });
    if (result.kind === "refused") throw new RefusalError(result.refusal);
    if (result.kind === "accepted") {
      ctx.status = 202;
      ctx.body = { status: "accepted" };
      return;
    }
    ctx.body = { revoked: true };
  });

  return router;
}

/**
 * `?element=N`: the index of one element of a fanned-out slot, or null when absent; anything but a
 * non-negative integer is 404 not-found (a path that names nothing).
 */
export function elementOf(raw: unknown): number | null {
  if (raw === undefined) return null;
  const element = Number(raw);
  if (typeof raw !== "string" || !/^[0-9]+$/.test(raw) || !Number.isSafeInteger(element)) {
    throw new RefusalError(refuse(RefusalCode.NotFound, "?element must be a non-negative integer (the index of the fanned-out slot)."));
  }
  return element;
}
