/**
 * Who a request comes from, as a principal (v0.4 "People inside the company"): the one place the
 * web process answers "who is signed in?" for the inbox, the task pages and every principal
 * endpoint (raise, `GET /api/inbox`).
 *
 * Sources, tried in order (the first that is present and valid decides; an invalid bearer token is
 * not skipped):
 * 1. the signed session cookie `slotflow_session` (sign-in through the OpenID provider or the
 *    development sign-in — src/web/identity/ owns both);
 * 2. `Authorization: Bearer <jwt>`: an HS256 JWT signed with SLOTFLOW_JWT_SECRET (src/auth/jwt.ts),
 *    or one signed by SLOTFLOW_OIDC_ISSUER (verified against its JWKS).
 *
 * A bearer JWT's header `alg` decides which: `HS256` is checked against SLOTFLOW_JWT_SECRET only;
 * any other (with an issuer configured) against the issuer's JWKS with asymmetric algorithms only —
 * so `alg: none` and an HS256 token "signed" with the issuer's public key are both refused.
 *
 * `signedIn(ctx, rt)` memoizes its answer on `ctx.state`; `null` means nobody is signed in.
 * Refusals: a present but invalid bearer token throws 401 `unauthorized` (never quoting the token);
 * an issuer that does not answer throws 503 `unavailable`. `requirePrincipal` turns "nobody" into 401.
 * A session cookie that is tampered with, sealed with a key no longer in SLOTFLOW_SESSION_SECRET, or
 * expired counts as absent (a page then sends the browser to sign in again).
 */
import { t } from "../../i18n/index.js";
import { decodeProtectedHeader } from "jose";
import type { Context } from "koa";
import type { PrincipalClaims } from "../../engine/commands/types.js";
import { RefusalCode, RefusalError, refuse } from "../../engine/refusals.js";
import type { Runtime } from "../../runtime.js";
import { csrfMatches } from "../../auth/csrf.js";
import { jwtSettings, verifyPrincipal } from "../../auth/jwt.js";
import type { Principal, PrincipalSource } from "../../auth/principal.js";
import { bearerToken } from "../../auth/tokens.js";
import { html, type Html } from "../page/html.js";
import { verifyIssuerJwt } from "./oidc.js";
import { readSession } from "./session.js";

/** A signed-in principal and how it came (src/auth/principal.ts: `source` is "session", "hs256" or "issuer"). */
export interface SignedIn {
  principal: PrincipalClaims;
  source: Extract<PrincipalSource, "session" | "hs256" | "issuer">;
  /** "session": a browser with the session cookie (forms need `csrf`); "bearer": an API client. */
  via: "session" | "bearer";
  /** The session's CSRF token (every state-changing form of a session carries it); null for bearer. */
  csrf: string | null;
  /** True when signed in through the development sign-in (every page says so). */
  development: boolean;
  /**
   * The person's IANA time zone kept in the session (src/i18n `readerZone`; the issuer's `zoneinfo`
   * claim at sign-in): the insiders' pages write times in it. Null — no zone, an unknown one, or a
   * bearer client — means UTC with the offset written.
   */
  zone: string | null;
}

const MEMO = Symbol("slotflow.signedIn");

/** The request's principal, or null when it carries neither a session nor a bearer token. */
export async function signedIn(ctx: Context, rt: Runtime): Promise<SignedIn | null> {
  const state = ctx.state as Record<symbol, SignedIn | null | undefined>;
  if (state[MEMO] !== undefined) return state[MEMO];
  let found: SignedIn | null = null;
  const session = await readSession(ctx, rt.config, rt);
  if (session) {
    found = { principal: session.principal, source: "session", via: "session", csrf: session.csrf, development: session.development, zone: session.zone };
  } else {
    const bearer = bearerToken(ctx.get("authorization"));
    if (bearer !== null) {
      const p = await bearerPrincipal(ctx, rt, bearer);
      found = { principal: p.claims, source: p.source as "hs256" | "issuer", via: "bearer", csrf: null, development: false, zone: null };
    }
  }
  state[MEMO] = found;
  return found;
}

/** For a principal endpoint (JSON): the signed-in principal, else 401 `unauthorized`. */
export async function requirePrincipal(ctx: Context, rt: Runtime): Promise<SignedIn> {
  const who = await signedIn(ctx, rt);
  if (!who) throw new RefusalError(refuse(RefusalCode.Unauthorized, "Sign in: send a principal's JWT as Authorization: Bearer <jwt>, or sign in at /auth/login."));
  return who;
}

/**
 * The principal of a bearer JWT: HS256 (SLOTFLOW_JWT_SECRET) or the issuer's, by the token's
 * header `alg` (see the module header). The one resolver of bearer principals: `signedIn` (the
 * inbox, the task pages, raise) and `POST /mcp` (handed in by app.ts: MCP imports no web module)
 * use it. Throws 401 `unauthorized` for a token that is not valid, 503 when the issuer does not answer.
 */
export async function bearerPrincipal(ctx: Context, rt: Runtime, token: string): Promise<Principal> {
  let alg: unknown = null;
  try {
    alg = decodeProtectedHeader(token).alg;
  } catch {
    // not a JWS: the HS256 check below refuses it with its usual 401
  }
  const oidc = rt.config.oidc;
  if (alg === "HS256" || !oidc) return { claims: await verifyPrincipal(ctx, jwtSettings(rt.config)), source: "hs256" };
  return { claims: await verifyIssuerJwt(oidc, token, rt.config.jwtMaxTtlSeconds), source: "issuer" };
}

/**
 * For an HTML page: the signed-in principal, or null after answering 303 to
 * `/auth/login?returnTo=<this path and query>` (the caller then returns).
 */
export async function signedInPage(ctx: Context, rt: Runtime): Promise<SignedIn | null> {
  const who = await signedIn(ctx, rt);
  if (who) return who;
  ctx.status = 303;
  ctx.redirect(`/auth/login?returnTo=${encodeURIComponent(ctx.originalUrl)}`);
  return null;
}

/**
 * True when a state-changing form of `who` carries its CSRF token (bearer clients need none);
 * src/auth/csrf.ts compares it.
 */
export function csrfOk<W extends Pick<SignedIn, "via" | "csrf">>(who: W, given: unknown): boolean {
  if (who.via === "bearer") return true;
  return csrfMatches(who.csrf, given);
}

/** CSS for `developmentBanner` (pages add it to their own nonce'd style: inline style attributes would break their CSP). */
export const DEVELOPMENT_BANNER_STYLE =
  ".dev-banner { background: #fff3cd; color: #4d3900; border: 2px solid #8a6700; padding: 0.5rem 1rem; margin: 0 0 1rem; font-weight: 600; overflow-wrap: anywhere; }";

/**
 * The banner every page signed in through the development sign-in shows (v0.4: the development
 * sign-in is "marked as such on every page it signs into"); empty for anyone else. Class
 * `dev-banner` (see DEVELOPMENT_BANNER_STYLE), `role="note"`.
 */
export function developmentBanner(who: SignedIn | null, lang = "en"): Html {
  if (!who?.development) return html``;
  return html`<div class="dev-banner" role="note">${t(lang, "task.devBanner", { who: who.principal.id })}</div>`;
}

/** A session's "Sign out" form (`POST /auth/logout` with its CSRF token); empty for a bearer client. */
export function signOutForm(who: SignedIn | null, lang = "en"): Html {
  if (who?.via !== "session" || !who.csrf) return html``;
  return html`<form class="sign-out" method="post" action="/auth/logout"><input type="hidden" name="csrf" value="${who.csrf}"><button type="submit" class="secondary">${t(lang, "signin.signOut")}</button></form>`;
}
