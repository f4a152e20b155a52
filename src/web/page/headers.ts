/**
 * The one writer of a page's security headers (issue 39 item 1: four CSP writers became this
 * module). Every HTML page slotflow renders itself gets `Content-Security-Policy` with
 * `default-src 'none'`, a per-response `nonce` for its one inline style (and script, if it has
 * one), `form-action 'self'`, `base-uri 'none'`, `frame-ancestors 'none'`; and `Cache-Control:
 * no-store`, `X-Robots-Tag: noindex, nofollow`, `X-Content-Type-Options: nosniff`,
 * `X-Frame-Options: DENY`. By kind:
 *
 * | kind | pages | script, `connect-src 'self'` | `img-src` | Referrer-Policy |
 * |---|---|---|---|---|
 * | `scriptless` | the inbox, the task pages, the sign-in pages, home | no | `'self'` with a brand logo, else `'none'` | `same-origin` |
 * | `responder` | the responder page and the forward form's answers (page/index.ts) | yes (and `font-src 'none'`) | as scriptless | `no-referrer` (the URL holds the token) |
 * | `console` | the operators' console (console/index.ts) | yes | `'self'` | `no-referrer` |
 *
 * `logo`: SLOTFLOW_BRAND_LOGO is configured (served from this origin, issue 42). Not HTML of
 * slotflow's own, so not here: the queue dashboard (Bull Board's page, dashboard.ts
 * `DASHBOARD_CSP`), the brand logo itself (`sandbox`, brand-logo.ts) and the API reference's page
 * (openapi.ts).
 */
import type { Context } from "koa";

/** Which page a response is (see the module header). */
export type PageKind = "scriptless" | "responder" | "console";

/** The Content-Security-Policy of a page of `kind` with `nonce`. */
export function pageCsp(kind: PageKind, nonce: string, logo = false): string {
  const img = kind === "console" || logo ? "img-src 'self'" : "img-src 'none'";
  const directives =
    kind === "scriptless" ? ["default-src 'none'", `style-src 'nonce-${nonce}'`, img]
    : kind === "responder" ? ["default-src 'none'", `script-src 'nonce-${nonce}'`, `style-src 'nonce-${nonce}'`, "connect-src 'self'", img, "font-src 'none'"]
    : ["default-src 'none'", `script-src 'nonce-${nonce}'`, `style-src 'nonce-${nonce}'`, img, "connect-src 'self'"];
  // every page's forms (the forward form, the task form, the console's actions) post to this origin
  return [...directives, "form-action 'self'", "base-uri 'none'", "frame-ancestors 'none'"].join("; ");
}

/** Sets the security headers of a page of `kind` (see the module header). */
export function setPageSecurityHeaders(ctx: Context, kind: PageKind, nonce: string, logo = false): void {
  ctx.set("Content-Security-Policy", pageCsp(kind, nonce, logo));
  ctx.set("Referrer-Policy", kind === "scriptless" ? "same-origin" : "no-referrer");
  ctx.set("Cache-Control", "no-store");
  ctx.set("X-Robots-Tag", "noindex, nofollow");
  ctx.set("X-Content-Type-Options", "nosniff");
  ctx.set("X-Frame-Options", "DENY");
}

/** The headers of a server-rendered page with no script (kind `scriptless`). */
export function setScriptlessPageHeaders(ctx: Context, nonce: string, logo = false): void {
  setPageSecurityHeaders(ctx, "scriptless", nonce, logo);
}
