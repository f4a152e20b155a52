/**
 * `POST {base_url}/api/workflow/callback/{token}/forward` (v0.4 "Many responders, forwarding, and
 * receipts"; docs/responder-page.md "Send this to someone else", docs/http-api.md). No sign-in: the
 * token in the path is the credential, as for a deposit.
 *
 * Two bodies:
 * - JSON `{"email": "…"}` (API clients, and the page's script): answers 200 `{"status":"forwarded"}`,
 *   202 `{"status":"accepted"}` when the worker takes longer than SLOTFLOW_DEPOSIT_WAIT_MS, or a
 *   problem document;
 * - the responder page's form without JavaScript (`application/x-www-form-urlencoded`, members
 *   `email` and `csrf`): the request must come from this origin (`Origin` absent, `null` — a
 *   no-referrer page sends that — or this server's) and carry the page's CSRF token
 *   (src/auth/csrf.ts), else an HTML page with status 403; it answers 303 to the link's own
 *   page (which then says the link was passed on) or an HTML page with the refusal's status.
 *   Its member `lang` (the responder page's language) chooses the language of that page and of
 *   the forward mail (issue 42); JSON clients get their `Accept-Language`, else the default.
 *
 * Order of checks, each refusing with nothing changed: 405 (`Allow: POST`); 429 rate-limited;
 * 415 / 413 / 400 for the body; 404 / 410 for an unknown or no longer live link, then 422 for a bad
 * address (commands/redeem.ts `prepareForward`); then the `forward` command is queued and applied
 * by a worker under the run lock (commands/forward.ts: 409 not-forwardable, 409 forward-limit, 410
 * when another forward or an answer came first).
 */
import { randomBytes } from "node:crypto";
import type Router from "@koa/router";
import type { Context } from "koa";
import { RefusalCode, RefusalError, refuse, type Refusal } from "../engine/refusals.js";
import type { Runtime } from "../runtime.js";
import { engineClient, type EngineClient } from "../engine-client/client.js";
import { dependency } from "../engine-client/dependency.js";
import { forwardRefusedDocument, setPageHeaders } from "./page/index.js";
import { csrfMatches, forwardCsrf } from "../auth/csrf.js";
import { readForm } from "../auth/form.js";
import { sameOrigin } from "../auth/same-origin.js";
import { readerOf } from "./page/reader.js";
import { STATUS } from "./problems.js";
import type { RateLimit } from "../http/rate-limit.js";
import { readBody } from "../http/request-body.js";

export const FORWARD_ROUTE = "/api/workflow/callback/:token/forward";

/** The largest forward form, bytes (an address and a token). */
const FORM_LIMIT_BYTES = 4096;

/** The forward form (src/auth/form.ts; the route checked its type). */
function readForwardForm(ctx: Context): Promise<URLSearchParams> {
  return readForm(ctx, FORM_LIMIT_BYTES, { anyType: true, tooLarge: `A forward form is at most ${FORM_LIMIT_BYTES} bytes.` });
}

/** Adds the forward route to the callback router (callback.ts). */
export function addForwardRoute(router: Router, rt: Runtime, rateLimit: RateLimit): void {
  const client = engineClient(rt);
  router.all(FORWARD_ROUTE, async (ctx) => {
    if (ctx.method !== "POST") {
      throw new RefusalError(refuse(RefusalCode.MethodNotAllowed, "A link is forwarded with POST only."));
    }
    await dependency(rt.log, "redis", () => rateLimit.consume(ctx));
    const token = ctx.params.token;
    if (ctx.is("application/x-www-form-urlencoded")) {
      await fromForm(rt, client, ctx, token);
      return;
    }
    const body = await readBody(ctx, "json", 4096, rt.config.limits.maxInputDepth);
    // the mail's language (issue 42): Accept-Language (the page's script sends the browser's) → default
    const result = await client.forward(token, body, readerOf(ctx, rt.config).lang);
    if (result.kind === "refused") throw new RefusalError(result.refusal);
    if (result.kind === "accepted") {
      ctx.status = 202;
      ctx.body = { status: "accepted" };
      return;
    }
    ctx.status = 200;
    ctx.body = { status: "forwarded" };
  });
}

/** The page's form, without JavaScript: same origin and CSRF, then 303 to the link's page or an HTML refusal. */
async function fromForm(rt: Runtime, client: EngineClient, ctx: Context, token: string): Promise<void> {
  const nonce = randomBytes(16).toString("base64");
  const form = await readFormOnce();
  // the page's language: the form's `lang` (the responder page's own) → Accept-Language → default (issue 42)
  const reader = readerOf(ctx, rt.config, form?.get("lang") ?? null);
  const page = (refusal: Refusal) => {
    setPageHeaders(ctx, nonce, rt.config.brand.logoFile !== null);
    ctx.status = STATUS[refusal.code];
    ctx.type = "text/html; charset=utf-8";
    ctx.body = forwardRefusedDocument(nonce, refusal, token, reader);
  };
  async function readFormOnce(): Promise<URLSearchParams | null> {
    if (!sameOrigin(ctx, rt.config.baseUrl)) return null;
    return readForwardForm(ctx);
  }
  if (!form) return page(refuse(RefusalCode.AuthorizeDenied, "This form was sent from another site."));
  if (!csrfMatches(forwardCsrf(rt.config.sealKey, token), form.get("csrf"))) {
    return page(refuse(RefusalCode.AuthorizeDenied, "The form's check token is missing or wrong: reload the page and try again."));
  }
  const result = await client.forward(token, { email: form.get("email") ?? "" }, reader.lang);
  if (result.kind !== "refused") {
    ctx.status = 303;
    ctx.redirect(`/api/workflow/callback/${encodeURIComponent(token)}?lang=${reader.lang}`);
    ctx.set("Cache-Control", "no-store");
    ctx.set("Referrer-Policy", "no-referrer");
    return;
  }
  page(result.refusal);
}
