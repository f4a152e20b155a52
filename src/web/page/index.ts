/**
 * The responder page: `GET {base_url}/api/workflow/callback/{token}` from a client whose `Accept`
 * prefers `text/html` (issue 10 §1; HTTP API "The responder page"). callback.ts calls
 * `wantsResponderPage` first and hands such a GET here; every other GET (`Accept` of any type, JSON, or none),
 * HEAD and every other method keep answering 405 `Allow: POST`.
 *
 * Answers (never spending the link — only the POST does; nothing is logged but the redacted path):
 *   200 the form (document.ts) for a live link whose slot is open;
 *   404 / 410 / 409 a page saying what happened, with the status the POST would have
 *       (link-not-found, link-burned / link-retired / link-dead, slot-not-open);
 *   503 `unavailable` (problem JSON, as for a POST) when PostgreSQL cannot be reached.
 * Headers on every page: `Content-Security-Policy` with a fresh nonce for the one inline style and
 * script, `default-src 'none'`, `connect-src 'self'` (the POST), `form-action 'self'` (the forward form),
 * `frame-ancestors 'none'`; `Referrer-Policy: no-referrer` (the URL holds the token);
 * `Cache-Control: no-store`; `X-Robots-Tag: noindex, nofollow`; `X-Content-Type-Options: nosniff`;
 * `X-Frame-Options: DENY`; `Vary: Accept, Accept-Language` (the same URL answers 405 to API clients,
 * and speaks the reader's language: page/reader.ts, issue 42).
 */
import { randomBytes } from "node:crypto";
import type { Context } from "koa";
import { setPageSecurityHeaders } from "./headers.js";
import { responderPage } from "../../engine/views/responder.js";
import { STATUS } from "../problems.js";
import type { Runtime } from "../../runtime.js";
import { dependency } from "../../engine-client/dependency.js";
import { endedDocument, formDocument } from "./document.js";
import { forwardCsrf } from "../../auth/csrf.js";
import { addVary, readerOf } from "./reader.js";
export { forwardRefusedDocument } from "./document.js";

/** True for a GET whose `Accept` prefers HTML to JSON (a browser); false for API clients and scanners sending `*\/*`. */
export function wantsResponderPage(ctx: Context): boolean {
  if (ctx.method !== "GET") return false;
  const accept = ctx.get("accept");
  if (accept === "") return false;
  return ctx.accepts("application/json", "text/html") === "text/html";
}

/**
 * The page's security headers (see the module header); also used by the forward form's answers
 * (forward.ts). `logo`: a brand logo is configured (SLOTFLOW_BRAND_LOGO), so images may come from
 * this origin (`img-src 'self'`, the logo's route only serves images); else `img-src 'none'`.
 */
export function setPageHeaders(ctx: Context, nonce: string, logo = false): void {
  setPageSecurityHeaders(ctx, "responder", nonce, logo);
  addVary(ctx, "Accept");
}

/** Answers the responder page for `token` (see the module header). */
export async function serveResponderPage(rt: Runtime, ctx: Context, token: string): Promise<void> {
  const page = await dependency(rt.log, "database", () =>
    responderPage({ db: rt.db, sealer: rt.sealer, baseUrl: rt.config.baseUrl }, token, { markNumbers: true }),
  );
  const nonce = randomBytes(16).toString("base64");
  setPageHeaders(ctx, nonce, rt.config.brand.logoFile !== null);
  const reader = readerOf(ctx, rt.config, page.ok ? page.language : null);
  ctx.type = "text/html; charset=utf-8";
  if (page.ok) {
    ctx.status = 200;
    ctx.body = formDocument(nonce, page, page.forwardable ? { token, csrf: forwardCsrf(rt.config.sealKey, token) } : null, reader);
  } else {
    ctx.status = STATUS[page.refusal.code];
    ctx.body = endedDocument(nonce, page.refusal, page.expiredAt ?? null, reader);
  }
}
