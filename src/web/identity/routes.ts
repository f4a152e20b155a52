/**
 * Sign-in routes of people inside the company (v0.4 "People inside the company"):
 *
 * | route | does |
 * |---|---|
 * | `GET /auth/login?returnTo=PATH` | with SLOTFLOW_OIDC_ISSUER: 302 to its authorization endpoint (state, nonce, PKCE S256), the pending sign-in sealed in the `slotflow_login` cookie (path /auth, 10 min). Without one, with SLOTFLOW_DEV_SIGN_IN=1: the development sign-in page; otherwise 404 |
 * | `POST /auth/login` (id, email, roles, zone, csrf, returnTo) | the development sign-in (same-origin, the page's CSRF token): a session with `development: true` (and the IANA time `zone` when given), 303 to returnTo; 422 page for a missing or over-long id, or a zone `Intl` does not know; 404 unless SLOTFLOW_DEV_SIGN_IN=1 (and no issuer) |
 * | `GET /auth/callback` | completes the issuer's sign-in: `slotflow_session`, 303 to returnTo; 400 `sign-in-failed` on a wrong or stale state, nonce or code; 404 without an issuer |
 * | `POST /auth/logout` (`csrf` form field or `X-CSRF-Token` header) | ends the session (its server-side row at once); 303 to the issuer's end_session_endpoint (id_token_hint, else client_id; post_logout_redirect_uri `{BASE_URL}/`) when it has one, else `/`; a browser's form (`Sec-Fetch-Dest: document`) gets instead a 200 page that moves on to that endpoint by itself (meta refresh and a link: a redirect of a form would be blocked by the page's CSP `form-action 'self'`); 403 `csrf-refused` without the session's token or from another site |
 * | `POST /auth/backchannel-logout` (form field `logout_token`) | OpenID Connect Back-Channel Logout 1.0, from the issuer server to server (no cookie, no CSRF): a valid logout token (oidc.ts `verifyLogoutToken`) ends at once every live session it names (`sid`: the issuer's session kept at sign-in; `sub`: the person); 200 with an empty body; 400 `{"error":"invalid_request"}` for a missing or invalid token (nothing ends); 404 without an issuer |
 * | `GET /auth/whoami` | 200 `{id, email, roles, via, development, csrf, expiresAt, zone}` for whoever is signed in (session or bearer; `csrf` and `expiresAt` null for bearer; `zone` the session's IANA time zone, null without one and for bearer), else 401 |
 *
 * returnTo: a path on this site only, else `/inbox` (forms.ts `safeReturnTo`). Every answer is
 * `Cache-Control: no-store`.
 */
import { randomBytes } from "node:crypto";
import Router from "@koa/router";
import type { Context } from "koa";
import { RefusalCode, RefusalError, refuse } from "../../engine/refusals.js";
import type { Runtime } from "../../runtime.js";
import { devSignInPage, type DevForm } from "./dev-page.js";
import { csrfMatches, randomCsrf } from "../../auth/csrf.js";
import { sameOrigin } from "../../auth/same-origin.js";
import { readForm, safeReturnTo } from "./forms.js";
import { LogoutTokenError, beginLogin, finishLogin, logoutUrl, verifyLogoutToken } from "./oidc.js";
import { endIssuerSessions } from "./store.js";
import { LOGIN_COOKIE, LOGIN_LIFETIME_S, endSession, readSession, seal, setCookie, startSession, unseal } from "./session.js";
import { csrfOk, signedIn } from "./signed-in.js";
import { setScriptlessPageHeaders } from "../page/headers.js";
import { html, raw } from "../page/html.js";
import { isRightToLeft, isTimeZone, t } from "../../i18n/index.js";
import { readerOf } from "../page/reader.js";

const notFound = () => new RefusalError(refuse(RefusalCode.NotFound, "No such page."));

function pageHeaders(ctx: Context, nonce: string): void {
  setScriptlessPageHeaders(ctx, nonce);
  ctx.type = "text/html; charset=utf-8";
}


/**
 * The page a browser's sign-out gets when the issuer has an end-session endpoint (issue 38 defect
 * 2): it moves on to `to` at once (`<meta http-equiv="refresh">`), with a link for a browser that
 * does not, in the reader's language (docs/languages.md). No script; the page's CSP is the scriptless pages'.
 */
function handOverPage(nonce: string, to: string, lang: string): string {
  return html`<!doctype html>
<html lang="${lang}"${isRightToLeft(lang) ? raw(' dir="rtl"') : null}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta http-equiv="refresh" content="0;url=${to}">
<title>${t(lang, "signout.title")} — slotflow</title>
<style nonce="${nonce}">body { margin: 0; font: 1rem/1.5 system-ui, sans-serif; } main { max-width: 32rem; margin: 0 auto; padding: 1.25rem 1rem; } a { font-weight: 600; }</style>
</head>
<body>
<main>
<h1>${t(lang, "signout.heading")}</h1>
<p><a href="${to}">${t(lang, "signout.continue")}</a></p>
</main>
</body>
</html>
`.text;
}

/** The /auth/* routes. */
export function identityRouter(rt: Runtime): Router {
  const config = rt.config;
  const devSignIn = config.devSignIn; // SLOTFLOW_DEV_SIGN_IN=1, no issuer, not production, loopback BASE_URL (config.ts)
  const router = new Router({ prefix: "/auth", sensitive: true, strict: true });

  router.use(async (ctx, next) => {
    ctx.set("Cache-Control", "no-store");
    await next();
  });

  async function showDevPage(ctx: Context, status: number, returnTo: string, values?: DevForm, error?: string): Promise<void> {
    const csrf = randomCsrf();
    setCookie(ctx, config.baseUrl, LOGIN_COOKIE, await seal(config.sessionKeys, "dev-csrf", { t: csrf }, LOGIN_LIFETIME_S), LOGIN_LIFETIME_S, "/auth");
    const nonce = randomBytes(16).toString("base64");
    pageHeaders(ctx, nonce);
    ctx.status = status;
    ctx.body = devSignInPage(nonce, csrf, returnTo, values, error ?? null, readerOf(ctx, config));
  }

  router.get("/login", async (ctx) => {
    const returnTo = safeReturnTo(ctx.query.returnTo, config.baseUrl);
    if (config.oidc) {
      const { url, pending } = await beginLogin(config, config.oidc, returnTo);
      setCookie(ctx, config.baseUrl, LOGIN_COOKIE, await seal(config.sessionKeys, "login", { ...pending }, LOGIN_LIFETIME_S), LOGIN_LIFETIME_S, "/auth");
      ctx.status = 302;
      ctx.redirect(url.href);
      return;
    }
    if (!devSignIn) throw notFound();
    await showDevPage(ctx, 200, returnTo);
  });

  router.post("/login", async (ctx) => {
    if (!devSignIn) throw notFound();
    if (!sameOrigin(ctx, config.baseUrl)) throw new RefusalError(refuse(RefusalCode.CsrfRefused, "This sign-in form was sent from another site."));
    const form = await readForm(ctx);
    const pending = await unseal(config.sessionKeys, "dev-csrf", ctx.cookies.get(LOGIN_COOKIE));
    const given = form.get("csrf") ?? "";
    if (!pending || typeof pending.t !== "string" || !csrfMatches(pending.t, given)) {
      throw new RefusalError(refuse(RefusalCode.CsrfRefused, "The sign-in form's CSRF token is missing, wrong or stale: open /auth/login again."));
    }
    const returnTo = safeReturnTo(form.get("returnTo"), config.baseUrl);
    const values: DevForm = { id: (form.get("id") ?? "").trim(), email: (form.get("email") ?? "").trim(), roles: form.get("roles") ?? "", zone: (form.get("zone") ?? "").trim() };
    const roles = values.roles.split(",").map((r) => r.trim()).filter((r) => r !== "");
    // the page's words in its language (docs/languages.md): the same reader as the page shown again
    const lang = readerOf(ctx, config).lang;
    const problem =
      values.id === "" || values.id.length > 200 ? t(lang, "signin.errId")
      : /[\u0000-\u001f\u007f-\u009f]/.test(values.id + values.email + values.roles) ? t(lang, "signin.errControl")
      : values.email.length > 320 || (values.email !== "" && !/^[^@\s]+@[^@\s]+$/.test(values.email)) ? t(lang, "signin.errEmail")
      : roles.length > 100 || roles.some((r) => r.length > 200) ? t(lang, "signin.errRoles")
      : values.zone !== "" && !isTimeZone(values.zone) ? t(lang, "signin.errZone")
      : null;
    if (problem) return showDevPage(ctx, 422, returnTo, values, problem);
    if (!(await startSession(ctx, config, rt, { id: values.id, email: values.email || null, roles }, { development: true, zone: values.zone || null }))) {
      return showDevPage(ctx, 422, returnTo, values, t(lang, "signin.errCookie"));
    }
    setCookie(ctx, config.baseUrl, LOGIN_COOKIE, null, 0, "/auth");
    rt.log.info({ principal: values.id }, "development sign-in");
    ctx.status = 303;
    ctx.redirect(returnTo);
  });

  router.get("/callback", async (ctx) => {
    if (!config.oidc) throw notFound();
    const pending = await unseal(config.sessionKeys, "login", ctx.cookies.get(LOGIN_COOKIE));
    setCookie(ctx, config.baseUrl, LOGIN_COOKIE, null, 0, "/auth"); // one use, whatever happens
    if (!pending || typeof pending.state !== "string" || typeof pending.nonce !== "string" || typeof pending.verifier !== "string") {
      throw new RefusalError(refuse(RefusalCode.SignInFailed, "No sign-in is pending in this browser (it took longer than 10 minutes, or started elsewhere): start again from /auth/login."));
    }
    const currentUrl = new URL(ctx.originalUrl, config.baseUrl);
    const { principal, idToken, issuerSid, zone } = await finishLogin(config, config.oidc, currentUrl, {
      state: pending.state,
      nonce: pending.nonce,
      verifier: pending.verifier,
      returnTo: String(pending.returnTo),
    });
    if (!(await startSession(ctx, config, rt, principal, { development: false, idToken, issuerSid, zone }))) {
      throw new RefusalError(
        refuse(RefusalCode.SignInFailed, "The roles and email the issuer gives this person do not fit in a session cookie (about 3.8 KB): point SLOTFLOW_OIDC_ROLES_CLAIM at a claim with fewer roles."),
      );
    }
    rt.log.info({ principal: principal.id }, "signed in");
    ctx.status = 303;
    ctx.redirect(safeReturnTo(pending.returnTo, config.baseUrl));
  });

  router.post("/logout", async (ctx) => {
    const session = await readSession(ctx, config, rt);
    if (!session) {
      await endSession(ctx, config.baseUrl, rt, null);
      ctx.status = 303;
      ctx.redirect("/");
      return;
    }
    if (!sameOrigin(ctx, config.baseUrl)) throw new RefusalError(refuse(RefusalCode.CsrfRefused, "This logout was sent from another site."));
    const given = ctx.get("x-csrf-token") || (ctx.is("application/x-www-form-urlencoded") ? (await readForm(ctx)).get("csrf") : null);
    if (!csrfOk({ via: "session", csrf: session.csrf }, given)) {
      throw new RefusalError(refuse(RefusalCode.CsrfRefused, "The logout's CSRF token is missing or wrong (send the session's token as the csrf form field or the X-CSRF-Token header)."));
    }
    await endSession(ctx, config.baseUrl, rt, session);
    rt.log.info({ principal: session.principal.id }, "signed out");
    const to = config.oidc && !session.development ? await logoutUrl(config, config.oidc, session.idToken) : null;
    if (to && ctx.get("sec-fetch-dest") === "document") {
      // issue 38 defect 2: a browser's form submission. Chromium applies the page's CSP
      // `form-action 'self'` to the redirects of a form's submission too, so a 303 to the issuer
      // would be blocked. A same-origin page hands over instead: a new navigation (meta refresh,
      // and a link for anyone it does not move on) that no form-action governs.
      const nonce = randomBytes(16).toString("base64");
      pageHeaders(ctx, nonce);
      ctx.status = 200;
      ctx.body = handOverPage(nonce, to.href, readerOf(ctx, config).lang);
      return;
    }
    ctx.status = 303;
    ctx.redirect(to ? to.href : "/");
  });

  // v0.5 "Security, round two": a sign-out at the issuer ends slotflow's session at once
  // (OpenID Connect Back-Channel Logout 1.0 §2.5-2.8). Server to server: no cookie, no CSRF; the
  // logout token's signature is the credential.
  router.post("/backchannel-logout", async (ctx) => {
    if (!config.oidc) throw notFound();
    const invalid = (why: string) => {
      rt.log.warn({ why }, "back-channel logout refused");
      ctx.status = 400;
      ctx.body = { error: "invalid_request" };
    };
    let token: string | null = null;
    try {
      token = (await readForm(ctx)).get("logout_token");
    } catch (err) {
      if (!(err instanceof RefusalError)) throw err;
      return invalid("not a form of at most 8 KiB");
    }
    if (!token) return invalid("no logout_token");
    let named: { sid: string | null; sub: string | null };
    try {
      named = await verifyLogoutToken(config.oidc, token);
    } catch (err) {
      if (err instanceof LogoutTokenError) return invalid(err.message);
      throw err;
    }
    const ended = await endIssuerSessions({ db: rt.db, log: rt.log }, named);
    rt.log.info({ principal: named.sub, ended }, "signed out at the issuer (back-channel logout)");
    ctx.status = 200;
    ctx.body = "";
  });

  router.get("/whoami", async (ctx) => {
    const who = await signedIn(ctx, rt);
    if (!who) throw new RefusalError(refuse(RefusalCode.Unauthorized, "Nobody is signed in: sign in at /auth/login, or send a principal's JWT as Authorization: Bearer <jwt>."));
    const session = who.via === "session" ? await readSession(ctx, config, rt) : null;
    ctx.body = {
      id: who.principal.id,
      email: who.principal.email,
      roles: who.principal.roles,
      via: who.via,
      development: who.development,
      csrf: who.csrf,
      expiresAt: session ? new Date(session.expiresAt * 1000).toISOString() : null,
      // the person's time zone kept in the session (the issuer's zoneinfo, or the development sign-in's)
      zone: who.zone,
    };
  });

  return router;
}
