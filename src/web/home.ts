/**
 * The home page, `GET /` (interfaces.md v0.5 "…branding; home"; issue 38 defect 3). `/` is also
 * where signing out lands (identity/routes.ts `POST /auth/logout`, and the issuer's
 * `post_logout_redirect_uri`), so it must never be a bare 404.
 *
 * | who asks | answer |
 * |---|---|
 * | a browser (`Accept` prefers `text/html`) that is signed in | 303 to `/inbox` |
 * | a browser that is not | 200, a small page: the brand name and a "Sign in" link to `/auth/login` |
 * | anyone else (`Accept: application/json`, `*\/*`, none; HEAD) | 200 JSON `{name, signIn, inbox, openapi}`: where to go next |
 *
 * The page is server-rendered with no script, in the pages' shell (page/document.ts `pageShell`)
 * under the scriptless pages' headers (page/headers.ts: a CSP with a per-response nonce for the one
 * inline style, `form-action 'self'`, no framing, `no-store`, `noindex`). Every answer carries
 * `Vary: Accept, Cookie` (it depends on both) and `Cache-Control: no-store`. The brand is
 * "slotflow" until SLOTFLOW_BRAND_NAME is configured; the words are in the reader's language.
 */
import { randomBytes } from "node:crypto";
import Router from "@koa/router";
import type { Context } from "koa";
import type { Runtime } from "../runtime.js";
import { signedIn } from "./identity/signed-in.js";
import { pageShell } from "./page/document.js";
import { setScriptlessPageHeaders } from "./page/headers.js";
import { html } from "./page/html.js";
import { readerOf, type Reader } from "./page/reader.js";
import { t } from "../i18n/index.js";

/** The name shown when no brand is configured. */
export const DEFAULT_BRAND = "slotflow";

/** Where the home page's "Sign in" leads (the sign-in start; it returns to `/inbox`). */
export const SIGN_IN_PATH = "/auth/login";

const HOME_STYLE = `
.home { margin-top: 3rem; }
.home p { color: var(--muted); }
a.sign-in { display: inline-block; min-height: 2.75rem; padding: 0.5rem 1.25rem; border-radius: 0.375rem; border: 1px solid var(--accent);
  background: var(--accent); color: var(--bg); font-weight: 600; text-decoration: none; }
a.sign-in:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
`;

/** True when the request's `Accept` prefers HTML to JSON (a browser); false without `Accept`. */
function prefersHtml(ctx: Context): boolean {
  if (ctx.get("accept") === "") return false;
  return ctx.accepts("application/json", "text/html") === "text/html";
}

/** The home page's HTML for a visitor who is not signed in. */
export function homeDocument(nonce: string, brand: string, reader: Reader): string {
  const body = html`<section class="home" aria-labelledby="home-title">
<h1 id="home-title">${brand}</h1>
<p>${t(reader.lang, "home.lead")}</p>
<p><a class="sign-in" href="${SIGN_IN_PATH}">${t(reader.lang, "signin.submit")}</a></p>
</section>`;
  return pageShell(nonce, brand, body, { reader, style: HOME_STYLE });
}

/** `GET /` (see the module header). */
export function homeRouter(rt: Runtime, brand = rt.config.brand.name ?? DEFAULT_BRAND): Router {
  const router = new Router({ sensitive: true, strict: true });
  router.get("/", async (ctx) => {
    ctx.set("Vary", "Accept, Cookie");
    ctx.set("Cache-Control", "no-store");
    if (ctx.method !== "GET" || !prefersHtml(ctx)) {
      ctx.body = { name: brand, signIn: SIGN_IN_PATH, inbox: "/inbox", openapi: "/api/openapi.json" };
      return;
    }
    if (await signedIn(ctx, rt)) {
      ctx.status = 303;
      ctx.redirect("/inbox");
      return;
    }
    const nonce = randomBytes(16).toString("base64");
    setScriptlessPageHeaders(ctx, nonce, rt.config.brand.logoFile !== null);
    ctx.set("Vary", "Accept, Cookie, Accept-Language");
    ctx.type = "text/html; charset=utf-8";
    ctx.body = homeDocument(nonce, brand, readerOf(ctx, rt.config));
  });
  return router;
}
