/**
 * The operators' console (issue 23; interfaces.md "The console"): server-rendered HTML served by
 * the web process under `/console`.
 *
 *   GET  /console                         → 303 /console/runs
 *   GET  /console/runs?…                  the runs list (runs-page.ts; the API's filters)
 *   GET  /console/runs/{id}               a run (run-page.ts)
 *   GET  /console/workflows/{name}        a workflow's versions, states, sources, diff (workflow-page.ts)
 *   POST /console/runs/{id}/cancel        reason → the cancel command (engine/commands/cancel.ts)
 *   POST /console/runs/{id}/slots/{alias}/revoke[?element=N]   reason → the revoke command (commands/revoke.ts)
 *
 * Paths match exactly (case-sensitive, strict: issue 38 M1); the sign-in gate (`consoleGate`) runs
 * in front of every router for any path under /console in any case, and again inside this router,
 * so no path variant reaches a handler without it; a handler without the gate's state answers 401.
 *
 * Sign-in: HTTP Basic (access.ts) — operator (admin token) or viewer (SLOTFLOW_VIEWER_TOKEN); 401
 * with `WWW-Authenticate: Basic` otherwise; a viewer's POST is 403 before anything is read. Every
 * POST is `application/x-www-form-urlencoded` (at most 16 KiB) carrying the user's CSRF token; a
 * POST from another origin (src/auth/same-origin.ts) or with a wrong token is 403. An action answers 303 to the
 * run's page with `?done=`/`?error=` (a fixed set of notices) — no JavaScript needed. The actor of
 * an action (`console operator "USER"`) and its reason are recorded in the run's history.
 * Headers of every console response: the responder page's (CSP with a per-response nonce and
 * `default-src 'none'`, but `form-action 'self'`; no-referrer; no-store; noindex; nosniff; DENY).
 */
import { randomBytes } from "node:crypto";
import Router from "@koa/router";
import type { Context, Next } from "koa";
import { CANCEL_REASON_MAX } from "../../engine-client/cancel-reason.js";
import { RefusalCode, RefusalError } from "../../engine/refusals.js";
import { parseRunsQuery } from "../../operators/runs-list.js";
import type { Runtime } from "../../runtime.js";
import { dependency } from "../../engine-client/dependency.js";
import { engineClient } from "../../engine-client/client.js";
import { readForm } from "../../auth/form.js";
import { sameOrigin } from "../../auth/same-origin.js";
import { setPageSecurityHeaders } from "../page/headers.js";
import { actorOf, consoleUser, csrfToken, csrfValid, type ConsoleUser } from "./access.js";
import { consolePage, messagePage } from "./layout.js";
import { NOTICES, readRun, runBody } from "./run-page.js";
import { runsBody } from "./runs-page.js";
import { workflowBody } from "./workflow-page.js";
import { UUID } from "../../json/uuid.js";

export const CONSOLE_PATH = "/console";
const FORM_LIMIT_BYTES = 16 * 1024;
const NAME = /^(?:slotflow\.)?[A-Za-z_][A-Za-z0-9_]{0,199}$/; // built-ins: `slotflow.` + an identifier (issue 33 item 2)

interface ConsoleState {
  nonce: string;
  user: ConsoleUser;
  form: URLSearchParams | null;
}

/** The console's headers (page/headers.ts, kind `console`). */
function setHeaders(ctx: Context, nonce: string): void {
  setPageSecurityHeaders(ctx, "console", nonce);
}

function page(ctx: Context, status: number, text: string): void {
  ctx.status = status;
  ctx.type = "text/html; charset=utf-8";
  ctx.body = text;
}

/** The query as single strings (a repeated parameter keeps its first value for the form). */
function flatQuery(ctx: Context): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(ctx.query)) {
    const s = Array.isArray(v) ? v[0] : v;
    if (typeof s === "string") out[k] = s.slice(0, 1000);
  }
  return out;
}

/** A console form (src/auth/form.ts), at most FORM_LIMIT_BYTES. */
function readConsoleForm(ctx: Context): Promise<URLSearchParams> {
  return readForm(ctx, FORM_LIMIT_BYTES, { wrongType: "Send the console's forms as application/x-www-form-urlencoded.", tooLarge: `A console form is at most ${FORM_LIMIT_BYTES} bytes.` });
}

/**
 * True for any path the console might be asked through: compared in lower case (issue 38 M1), so
 * `/CONSOLE/runs` asks for credentials like `/console/runs` (the router, case-sensitive, then
 * finds no route for it: 404).
 */
const underConsole = (path: string) => {
  const p = path.toLowerCase();
  return p === CONSOLE_PATH || p.startsWith(`${CONSOLE_PATH}/`);
};

const GATED = Symbol("slotflow.consoleGated");

/**
 * Every request under /console, whether a route takes it or not: headers, sign-in, and for any
 * method but GET/HEAD the role (a viewer's POST anywhere is 403), origin, form and CSRF checks.
 */
export function consoleGate(rt: Runtime) {
  const tokens = { adminToken: rt.config.adminToken, viewerToken: rt.config.viewerToken };
  return async (ctx: Context, next: Next) => {
    if (!underConsole(ctx.path)) return next();
    const marks = ctx.state as Record<symbol, boolean | undefined>;
    if (marks[GATED]) return next(); // already passed (the app's gate, then the router's)
    marks[GATED] = true;
    const nonce = randomBytes(16).toString("base64");
    setHeaders(ctx, nonce);
    const user = consoleUser(ctx.get("authorization") || undefined, tokens);
    if (!user) {
      ctx.set("WWW-Authenticate", 'Basic realm="slotflow console", charset="UTF-8"');
      return page(ctx, 401, messagePage(nonce, "Sign in", "Sign in with any user name and the admin token (operators) or the viewer token (read-only)."));
    }
    const state: ConsoleState = { nonce, user, form: null };
    if (ctx.method !== "GET" && ctx.method !== "HEAD") {
      if (user.role !== "operator") return page(ctx, 403, messagePage(nonce, "Read-only", "You are signed in as a viewer: you can look, not act."));
      if (!sameOrigin(ctx, rt.config.baseUrl)) return page(ctx, 403, messagePage(nonce, "Refused", "This form was sent from another site."));
      state.form = await readConsoleForm(ctx);
      if (!csrfValid(rt.config.adminToken, user, state.form.get("csrf"))) {
        return page(ctx, 403, messagePage(nonce, "Refused", "The form's CSRF token is missing or wrong: reload the page and try again."));
      }
    }
    ctx.state.console = state;
    await next();
  };
}

export function consoleRouter(rt: Runtime): Router {
  const router = new Router({ sensitive: true, strict: true });
  const client = engineClient(rt);
  // issue 38 M1: the gate runs inside the router too, so a route is never reached without it
  // (whatever the app mounts in front); it is a no-op for a request the app's gate already passed.
  router.use(consoleGate(rt));
  /** The gate's state; a handler reached without it refuses 401 (fails closed, never a 500). */
  const st = (ctx: Context): ConsoleState => {
    const state = ctx.state.console as ConsoleState | undefined;
    if (!state?.user || typeof state.nonce !== "string") throw new RefusalError({ code: RefusalCode.Unauthorized, detail: "Sign in to the console with HTTP Basic." });
    return state;
  };
  const show = (ctx: Context, status: number, title: string, body: Parameters<typeof consolePage>[3]) => page(ctx, status, consolePage(st(ctx).nonce, st(ctx).user, title, body));
  const notFound = (ctx: Context, what: string) => page(ctx, 404, messagePage(st(ctx).nonce, "Not found", what));
  const back = (ctx: Context, id: string, param: "done" | "error", value: keyof typeof NOTICES) => {
    ctx.redirect(`${CONSOLE_PATH}/runs/${id}?${param}=${value}`);
    ctx.status = 303;
  };
  const reasonOf = (form: URLSearchParams | null): string | null => {
    const r = (form?.get("reason") ?? "").trim();
    return r && r.length <= CANCEL_REASON_MAX && !r.includes("\u0000") ? r : null;
  };

  router.get(CONSOLE_PATH, (ctx) => {
    ctx.redirect(`${CONSOLE_PATH}/runs`);
    ctx.status = 303;
  });

  router.get(`${CONSOLE_PATH}/runs`, async (ctx) => {
    const raw = flatQuery(ctx);
    let filter = null;
    let error: string | null = null;
    try {
      filter = parseRunsQuery(ctx.query);
    } catch (err) {
      if (!(err instanceof RefusalError)) throw err;
      error = err.message;
    }
    const result = await dependency(rt.log, "database", async () => {
      const workflows = (await rt.db.workflow.findMany({ select: { name: true }, orderBy: { name: "asc" } })).map((w) => w.name);
      return runsBody(rt.db, { raw, filter, error }, workflows);
    });
    show(ctx, result.status, "Runs", result.body);
  });

  router.get(`${CONSOLE_PATH}/runs/:id`, async (ctx) => {
    const id = ctx.params.id;
    const data = UUID.test(id) ? await dependency(rt.log, "database", () => readRun(rt.db, rt.sealer, id.toLowerCase())) : null;
    if (!data) return notFound(ctx, "No run has this id.");
    const notice = typeof ctx.query.done === "string" ? ctx.query.done : typeof ctx.query.error === "string" ? ctx.query.error : null;
    const body = await runBody(data, st(ctx).user, csrfToken(rt.config.adminToken, st(ctx).user), notice && notice in NOTICES ? notice : null);
    show(ctx, 200, `Run ${data.view.id.slice(0, 8)} (${data.view.workflow})`, body);
  });

  router.get(`${CONSOLE_PATH}/workflows/:name`, async (ctx) => {
    const name = ctx.params.name;
    const body = NAME.test(name) ? await dependency(rt.log, "database", () => workflowBody(rt.db, name, flatQuery(ctx))) : null;
    if (!body) return notFound(ctx, "No workflow (or version) by this name is deployed.");
    show(ctx, 200, `Workflow ${name}`, body);
  });

  router.post(`${CONSOLE_PATH}/runs/:id/cancel`, async (ctx) => {
    const id = ctx.params.id;
    if (!UUID.test(id)) return notFound(ctx, "No run has this id.");
    const reason = reasonOf(st(ctx).form);
    if (!reason) return back(ctx, id, "error", "reason");
    const result = await client.cancel(id, reason, actorOf(st(ctx).user));
    if (result.kind === "accepted") return back(ctx, id, "done", "accepted");
    if (result.kind === "applied") return back(ctx, id, "done", "cancelled");
    if (result.refusal.code === RefusalCode.Unavailable) throw new RefusalError(result.refusal);
    if (result.refusal.code === RefusalCode.NotFound) return notFound(ctx, "No run has this id.");
    return back(ctx, id, "error", result.refusal.code === RefusalCode.RunFinished ? "run-finished" : "failed");
  });

  router.post(`${CONSOLE_PATH}/runs/:id/slots/:alias/revoke`, async (ctx) => {
    const { id, alias } = ctx.params;
    if (!UUID.test(id) || !NAME.test(alias)) return notFound(ctx, "No run or slot by this name.");
    const reason = reasonOf(st(ctx).form);
    if (!reason) return back(ctx, id, "error", "reason");
    // v0.4: `?element=N` revokes one element's own link of a fanned-out slot
    const rawElement = ctx.query.element;
    if (rawElement !== undefined && (typeof rawElement !== "string" || !/^[0-9]{1,9}$/.test(rawElement))) return notFound(ctx, "No run or slot by this name.");
    const element = rawElement === undefined ? {} : { element: Number(rawElement) };
    const result = await client.revoke(id, alias, { ...element, reason, actor: actorOf(st(ctx).user) });
    if (result.kind === "accepted") return back(ctx, id, "done", "accepted");
    if (result.kind === "applied") return back(ctx, id, "done", "revoked");
    if (result.refusal.code === RefusalCode.Unavailable) throw new RefusalError(result.refusal);
    return back(ctx, id, "error", result.refusal.code === RefusalCode.NotFound ? "no-link" : "failed");
  });

  return router;
}
