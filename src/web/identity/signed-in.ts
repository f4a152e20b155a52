/**
 * Who a request comes from, as a principal (v0.4 "People inside the company"): the one place the
 * web process answers "who is signed in?" for the inbox, the task pages and every principal
 * endpoint (raise, `GET /api/inbox`).
 *
 * Sources, tried in order (the first that is present decides; an invalid one is not skipped):
 * 1. the signed session cookie `slotflow_session` (sign-in through the OpenID provider or the
 *    development sign-in — src/web/identity/ owns both);
 * 2. `Authorization: Bearer <jwt>`: an HS256 JWT signed with SLOTFLOW_JWT_SECRET (src/web/auth.ts),
 *    or one signed by SLOTFLOW_OIDC_ISSUER (verified against its JWKS).
 *
 * `signedIn(ctx, rt)` memoizes its answer on `ctx.state`; `null` means nobody is signed in.
 * Refusals: a present but invalid bearer token throws 401 `unauthorized` (never quoting the token).
 */
import type { Context } from "koa";
import type { PrincipalClaims } from "../../engine/commands/types.js";
import type { Runtime } from "../../runtime.js";
import { jwtSettings, verifyPrincipal } from "../auth.js";

/** A signed-in principal and how it came. */
export interface SignedIn {
  principal: PrincipalClaims;
  /** "session": a browser with the session cookie (forms need `csrf`); "bearer": an API client. */
  via: "session" | "bearer";
  /** The session's CSRF token (every state-changing form of a session carries it); null for bearer. */
  csrf: string | null;
  /** True when signed in through the development sign-in (every page says so). */
  development: boolean;
}

const MEMO = Symbol("slotflow.signedIn");

/** The request's principal, or null when it carries neither a session nor a bearer token. */
export async function signedIn(ctx: Context, rt: Runtime): Promise<SignedIn | null> {
  const state = ctx.state as Record<symbol, SignedIn | null | undefined>;
  if (state[MEMO] !== undefined) return state[MEMO];
  let found: SignedIn | null = null;
  if (/^Bearer\s+\S+$/i.test(ctx.get("authorization"))) {
    found = { principal: await verifyPrincipal(ctx, jwtSettings(rt.config)), via: "bearer", csrf: null, development: false };
  }
  state[MEMO] = found;
  return found;
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

/** True when a state-changing form of `who` carries its CSRF token (bearer clients need none). */
export function csrfOk(who: SignedIn, given: unknown): boolean {
  if (who.via === "bearer") return true;
  return typeof given === "string" && who.csrf !== null && given.length === who.csrf.length && given === who.csrf;
}
