/**
 * The task page (v0.4 "People inside the company"): one page per slot for a signed-in principal,
 * with the responder page's form (page/form.ts in post mode), answered on the ordinary raise path.
 *
 * `GET /inbox/tasks/{runId}/{alias}[?element=N]` — signed in (else 303 to `/auth/login?returnTo=…`,
 * identity/signed-in.ts); answers
 *   200 the task: title, intro, who may answer, the form (an open slot), "not open yet" (a slot
 *       waiting on `After`), or how it ended and who answered ("Answered by you at …");
 *   403 a page saying why, when `Candidates` or an `[Authorize]` rule of the event refuses this
 *       principal (views/task.ts);
 *   404 a page, for an unknown run, alias or element (and `?element` that is not a non-negative
 *       integer; a fanned-out slot needs `?element`).
 * `POST` the same path — `application/x-www-form-urlencoded` (at most 64 KiB) with the form's
 * fields and `csrf`; refused with a 403 page when `Origin` names another origin or
 * `Sec-Fetch-Site` is `cross-site` / `same-site`, or when the CSRF token is wrong (identity/
 * signed-in.ts `csrfOk`; the checks and the form reader are src/auth/'s); 415 / 413 pages for another body. Then the form fields become the event's
 * JSON body (page/form-body.ts, the responder page's mapping) and the ordinary raise path runs as
 * this principal (the engine client's raiseChecked, src/engine-client/: `Candidates`, `[Authorize]`, `Requires`, `After`).
 * A POST reads the run once, for the view (engine/views/task.ts: one statement with the run's
 * current visit), and asks the gate (`Candidates`, `[Authorize]`, commands/gate.ts) once there;
 * the client then checks only the body and submits — no second read in the web process. The
 * worker applies the command in its own transaction with the run locked and checks it all again:
 *   303 to the task page once applied (it then says "Answered by you at …");
 *   202 a page "accepted, being applied" when the worker was late;
 *   422 the form again with each refusal beside its field (values kept);
 *   409 the form again with the `Requires` refusal (its `else` words) or a handler failure above
 *       it; a closed or not-yet-open slot: the page as it now stands;
 *   403 the page saying why (not a candidate, not authorized);  404 the 404 page.
 *   A submit button `_add=<param>` / `_remove=<param>.<row>` (a list's "Add an item" / "Remove
 *   item") raises nothing: 200, the form again with one row more or less.
 * A refusal is never a 5xx page; 503 `unavailable` (problem JSON) when PostgreSQL or Redis cannot be
 * reached. Headers: CSP `default-src 'none'` with a nonce for the one style, no script,
 * `form-action 'self'`, `frame-ancestors 'none'`; no-store; no-referrer; nosniff; DENY.
 */
import { randomBytes } from "node:crypto";
import Router from "@koa/router";
import type { Context } from "koa";
import { taskView, type TaskView } from "../../engine/views/task.js";
import { RefusalError, requiresGenericRaise, type Refusal } from "../../engine/refusals.js";
import type { BodyProblem } from "../../engine/values/body.js";
import { valueDepthExceeds } from "../../json/depth.js";
import { isStorableString } from "../../json/storable.js";
import type { Runtime } from "../../runtime.js";
import { dependency } from "../../engine-client/dependency.js";
import { readFormBody } from "../../auth/form.js";
import { sameOrigin } from "../../auth/same-origin.js";
import { csrfOk, signedInPage, type SignedIn } from "../identity/signed-in.js";
import { setScriptlessPageHeaders } from "../page/headers.js";
import { formBody, listRows } from "../page/form-body.js";
import { labelOf, type PostedForm } from "../page/form.js";
import { fieldError } from "../page/wording.js";
import { readerOf } from "../page/reader.js";
import { engineClient } from "../../engine-client/client.js";
import { formatNumber, t } from "../../i18n/index.js";
import { acceptedDocument, notFoundDocument, refusedDocument, type Doc, taskDocument } from "./document.js";

/** The route of a task page (interfaces.md "People inside the company"). */
export const TASK_ROUTE = "/inbox/tasks/:runId/:alias";

/** The largest task form accepted, in bytes. */
export const TASK_FORM_LIMIT_BYTES = 64 * 1024;

/** The most rows a list field is shown with (a form cannot grow a page without bound). */
const MAX_ROWS = 200;


function send(ctx: Context, status: number, text: string): void {
  ctx.status = status;
  ctx.type = "text/html; charset=utf-8";
  ctx.body = text;
}

/** `?element`: absent → null; a non-negative integer → it; anything else → undefined (404). */
function elementOf(ctx: Context): number | null | undefined {
  const raw = ctx.query.element;
  if (raw === undefined) return null;
  if (typeof raw !== "string" || !/^\d{1,9}$/.test(raw)) return undefined;
  return Number(raw);
}

/** The list rows to show for a posted form; a fresh form shows one blank row per list. */
function rowsOf(view: TaskView, values: URLSearchParams, fresh: boolean): Record<string, string[]> {
  const rows: Record<string, string[]> = {};
  for (const p of view.params) {
    if (p.type.kind !== "list") continue;
    const ids = listRows(p.name, values, MAX_ROWS);
    rows[p.name] = fresh && ids.length === 0 ? ["r1"] : ids;
  }
  return rows;
}

/** A fresh row id for list `param` (`r<n>`, unused so far). */
function nextRowId(ids: string[]): string {
  let n = ids.length + 1;
  while (ids.includes(`r${n}`)) n += 1;
  return `r${n}`;
}

/** A 422's `errors`, in the reader's words, beside their parameters (nested paths go to their parameter). */
function fieldErrors(view: TaskView, refusal: Refusal, lang: string): { errors: Record<string, string>; rest: string[] } {
  const problems = ((refusal.extra as { errors?: BodyProblem[] } | undefined)?.errors ?? []) as BodyProblem[];
  const errors: Record<string, string> = {};
  const rest: string[] = [];
  for (const pr of problems) {
    const name = pr.name.split(/[.[]/)[0] ?? "";
    const param = view.params.find((p) => p.name === name);
    if (param) errors[name] ??= fieldError(labelOf(param, lang), pr.problem, lang, pr.rule);
    else rest.push(pr.name ? `“${pr.name}” ${pr.problem}.` : `${pr.problem}.`);
  }
  return { errors, rest };
}

/**
 * A `requires-failed` refusal as the task page says it, in `lang`: the author's `else` variant for
 * that language (the refusal's `wordings`), else their default wording (`detail`); the generic
 * refusal (no wording given) in slotflow's own words (language.md "Languages of the responder").
 */
export function requiresWords(refusal: Pick<Refusal, "detail" | "extra">, alias: string, lang: string): string {
  const wordings = (refusal.extra as { wordings?: Record<string, unknown> } | undefined)?.wordings;
  const variant = wordings && Object.prototype.hasOwnProperty.call(wordings, lang) ? wordings[lang] : undefined;
  if (typeof variant === "string") return variant;
  if (refusal.detail === requiresGenericRaise(alias)) return t(lang, "task.requiresGeneric");
  return refusal.detail;
}

export function taskRouter(rt: Runtime): Router {
  const client = engineClient(rt);
  const router = new Router({ sensitive: true, strict: true });

  /** The principal, the nonce and the view, or null once a page (303, 404) was answered. */
  async function load(ctx: Context): Promise<{ who: SignedIn; doc: Doc; view: TaskView; element: number | null } | null> {
    const reader = readerOf(ctx, rt.config);
    const doc: Doc = { nonce: randomBytes(16).toString("base64"), reader, langParam: typeof ctx.query.lang === "string" && ctx.query.lang === reader.lang ? reader.lang : null };
    setScriptlessPageHeaders(ctx, doc.nonce, rt.config.brand.logoFile !== null);
    const who = await signedInPage(ctx, rt);
    if (!who) return null;
    // times in the signed-in person's zone (their session's, from the issuer's zoneinfo claim)
    doc.reader = { ...reader, zone: who.zone };
    const element = elementOf(ctx);
    const alias = ctx.params.alias ?? "";
    const view =
      element === undefined || !isStorableString(alias)
        ? null
        : await dependency(rt.log, "database", () => taskView({ db: rt.db, sealer: rt.sealer, baseUrl: rt.config.baseUrl }, ctx.params.runId ?? "", alias, element, who.principal));
    if (!view || element === undefined) {
      send(ctx, 404, notFoundDocument(doc, who));
      return null;
    }
    return { who, doc, view, element };
  }

  const actionOf = (ctx: Context) => ctx.originalUrl;

  router.get(TASK_ROUTE, async (ctx) => {
    const got = await load(ctx);
    if (!got) return;
    const { who, doc, view } = got;
    if (view.refusal) return send(ctx, 403, refusedDocument(doc, who, view, view.refusal.code as "not-a-candidate" | "authorize-denied"));
    const values = new URLSearchParams();
    const post: PostedForm = { values, errors: {}, rows: rowsOf(view, values, true) };
    send(ctx, 200, taskDocument(doc, who, view, { csrf: who.csrf ?? "", action: actionOf(ctx), post, message: null }));
  });

  router.post(TASK_ROUTE, async (ctx) => {
    const got = await load(ctx);
    if (!got) return;
    const { who, doc, element } = got;
    let view = got.view;
    if (!sameOrigin(ctx, rt.config.baseUrl)) return send(ctx, 403, refusedDocument(doc, who, view, "origin"));
    const form = await readFormBody(ctx, TASK_FORM_LIMIT_BYTES);
    if (form === "wrong-type") {
      return send(ctx, 415, taskDocument(doc, who, view, { csrf: who.csrf ?? "", action: actionOf(ctx), post: { values: new URLSearchParams(), errors: {}, rows: rowsOf(view, new URLSearchParams(), true) }, message: t(doc.reader.lang, "task.wrongType") }));
    }
    if (form === "too-large") {
      return send(ctx, 413, taskDocument(doc, who, view, { csrf: who.csrf ?? "", action: actionOf(ctx), post: { values: new URLSearchParams(), errors: {}, rows: rowsOf(view, new URLSearchParams(), true) }, message: t(doc.reader.lang, "task.tooLarge", { bytes: formatNumber(doc.reader.lang, TASK_FORM_LIMIT_BYTES) }) }));
    }
    const values = form;
    if (!csrfOk(who, values.get("csrf"))) return send(ctx, 403, refusedDocument(doc, who, view, "csrf"));
    const again = (status: number, errors: Record<string, string>, message: string | null, rows = rowsOf(view, values, false)) =>
      send(ctx, status, taskDocument(doc, who, view, { csrf: who.csrf ?? "", action: actionOf(ctx), post: { values, errors, rows }, message }));

    if (view.refusal) return send(ctx, 403, refusedDocument(doc, who, view, view.refusal.code as "not-a-candidate" | "authorize-denied"));
    if (!view.live || view.slot.status !== "open") return again(409, {}, null);

    // A list's "Add an item" / "Remove item" without script: the form again, nothing raised.
    const add = values.get("_add");
    const remove = values.get("_remove");
    if (add !== null || remove !== null) {
      const rows = rowsOf(view, values, false);
      if (add !== null && rows[add] && rows[add].length < MAX_ROWS) rows[add] = [...rows[add], nextRowId(rows[add])];
      if (remove !== null) {
        const [param, id] = remove.split(".");
        if (param && rows[param]) rows[param] = rows[param].filter((r) => r !== id);
      }
      return again(200, {}, null, rows);
    }

    const body = formBody(view.params, values);
    if (valueDepthExceeds(body, rt.config.limits.maxInputDepth)) {
      return again(422, {}, t(doc.reader.lang, "task.tooDeep", { depth: formatNumber(doc.reader.lang, rt.config.limits.maxInputDepth) }));
    }
    // The view above read the run once and asked the gate (Candidates, [Authorize]) once: the
    // client checks only the body, and the worker checks everything again under the run lock.
    const result = await client.raiseChecked({ runId: view.run.id, alias: view.slot.alias, element }, view.params, body, who.principal);
    if (result.kind === "accepted") return send(ctx, 202, acceptedDocument(doc, who, view, actionOf(ctx)));
    if (result.kind === "applied") {
      ctx.status = 303;
      ctx.redirect(actionOf(ctx));
      return;
    }
    const refusal: Refusal = result.refusal;
    switch (refusal.code) {
      case "invalid-body": {
        const { errors, rest } = fieldErrors(view, refusal, doc.reader.lang);
        return again(422, errors, rest.length ? t(doc.reader.lang, "task.checkAnswer", { problems: rest.join(" ") }) : null);
      }
      case "not-a-candidate":
      case "authorize-denied":
        return send(ctx, 403, refusedDocument(doc, who, view, refusal.code));
      case "requires-failed":
        return again(409, {}, requiresWords(refusal, view.slot.alias, doc.reader.lang));
      case "already-answered-by-you":
        return again(409, {}, t(doc.reader.lang, "task.alreadyAnsweredByYou"));
      case "handler-failed":
      case "configuration-fault":
        return again(409, {}, t(doc.reader.lang, "task.handlerFailed"));
      case "slot-closed":
      case "slot-not-open": {
        const fresh = await dependency(rt.log, "database", () => taskView({ db: rt.db, sealer: rt.sealer, baseUrl: rt.config.baseUrl }, view.run.id, view.slot.alias, element, who.principal));
        if (fresh) view = fresh;
        return send(ctx, 409, taskDocument(doc, who, view, { csrf: who.csrf ?? "", action: actionOf(ctx), post: { values, errors: {}, rows: rowsOf(view, values, false) }, message: t(doc.reader.lang, refusal.code === "slot-closed" ? "task.slotClosed" : "task.notOpen") }, t(doc.reader.lang, "task.notApplied")));
      }
      case "not-found":
        return send(ctx, 404, notFoundDocument(doc, who));
      default:
        throw new RefusalError(refusal);
    }
  });

  return router;
}
