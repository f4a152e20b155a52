/**
 * Principals' HS256 JWTs (source `hs256`, principal.ts): signed with `SLOTFLOW_JWT_SECRET`,
 * verified with jose, for the ordinary raise path, the inbox and the task pages.
 * JWT claims: `sub` (the principal id, required), `email` (string, optional), `roles` (array of
 * strings, optional), `exp` (required: issue 28 item 8 — a token without it was accepted forever),
 * `iat` (optional); the lifetime — `exp` − `iat`, or `exp` − now without `iat` — at most
 * SLOTFLOW_JWT_MAX_TTL_SECONDS; `aud` and `iss` required to match when SLOTFLOW_JWT_AUDIENCE /
 * SLOTFLOW_JWT_ISSUER are set.
 */
import { jwtVerify, SignJWT } from "jose";
import type { Context } from "koa";
import type { PrincipalClaims } from "../engine/commands/types.js";
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";
import { checkedPrincipal } from "./principal.js";
import { bearerToken } from "./tokens.js";

/** `checkedPrincipal` lives in principal.ts (the one principal type); re-exported for the JWT's readers. */
export { checkedPrincipal };

const bearer = (ctx: Context): string | null => bearerToken(ctx.get("authorization"));

const unauthorized = (detail: string) => new RefusalError(refuse(RefusalCode.Unauthorized, detail));

/** Clock skew allowed for a token's `iat` in the future, seconds (issue 38 L2). */
export const MAX_IAT_SKEW_S = 60;

/**
 * Why a token's lifetime is refused, or null: `iat` more than MAX_IAT_SKEW_S ahead of now, or
 * `exp` more than `maxTtlSeconds` after `iat` (after now without `iat`). Seconds since the epoch.
 */
export function lifetimeRefusal(claims: { iat?: unknown; exp?: unknown }, maxTtlSeconds: number, nowS = Math.floor(Date.now() / 1000)): string | null {
  if (claims.iat !== undefined && typeof claims.iat !== "number") return "iat is not a number";
  if (typeof claims.iat === "number" && claims.iat > nowS + MAX_IAT_SKEW_S) return "issued in the future";
  const from = typeof claims.iat === "number" ? claims.iat : nowS;
  if (typeof claims.exp !== "number" || claims.exp - from > maxTtlSeconds) return "lives too long";
  return null;
}

/** How principal JWTs are checked and minted (config.ts: SLOTFLOW_JWT_*). */
export interface JwtSettings {
  /** SLOTFLOW_JWT_SECRET: the HS256 key, as UTF-8 bytes. */
  secret: string;
  /** SLOTFLOW_JWT_MAX_TTL_SECONDS: the longest lifetime accepted (and minted), seconds. */
  maxTtlSeconds: number;
  /** SLOTFLOW_JWT_AUDIENCE: required in `aud` when set. */
  audience: string | null;
  /** SLOTFLOW_JWT_ISSUER: required as `iss` when set. */
  issuer: string | null;
}

/** The JwtSettings of a loaded configuration. */
export function jwtSettings(config: { jwtSecret: string; jwtMaxTtlSeconds: number; jwtAudience: string | null; jwtIssuer: string | null }): JwtSettings {
  return { secret: config.jwtSecret, maxTtlSeconds: config.jwtMaxTtlSeconds, audience: config.jwtAudience, issuer: config.jwtIssuer };
}

/**
 * Verifies a principal's JWT; throws 401 `unauthorized` when it is missing, not HS256 with the
 * secret, without `sub` or `exp`, expired, not yet valid, living longer than `maxTtlSeconds`, or
 * (when configured) of another audience or issuer. The detail never says which, nor quotes the token.
 */
export async function verifyPrincipal(ctx: Context, settings: JwtSettings): Promise<PrincipalClaims> {
  const token = bearer(ctx);
  if (!token) throw unauthorized("Sign in: send a principal's JWT as Authorization: Bearer <jwt>.");
  let principal: PrincipalClaims;
  try {
    const { payload } = await jwtVerify(token, new TextEncoder().encode(settings.secret), {
      algorithms: ["HS256"],
      requiredClaims: ["exp"],
      ...(settings.audience ? { audience: settings.audience } : {}),
      ...(settings.issuer ? { issuer: settings.issuer } : {}),
    });
    if (typeof payload.sub !== "string" || payload.sub === "") throw new Error("no sub");
    // issue 28 item 8, issue 38 L2: a bounded lifetime, counted from iat (never in the future) when the token has one, else from now
    const why = lifetimeRefusal(payload, settings.maxTtlSeconds);
    if (why) throw new Error(why);
    const roles = Array.isArray(payload.roles) ? payload.roles.filter((r): r is string => typeof r === "string") : [];
    const email = typeof payload.email === "string" ? payload.email : null;
    principal = { id: payload.sub, email, roles };
  } catch {
    throw unauthorized(
      "The bearer JWT is not valid (HS256, signed with SLOTFLOW_JWT_SECRET, with sub and exp claims, not expired, not issued in the future, living at most SLOTFLOW_JWT_MAX_TTL_SECONDS, and with the configured aud and iss).",
    );
  }
  return checkedPrincipal(principal);
}

/**
 * Signs a principal JWT (for `slotflow token`, `slotflow raise --as` and tests): `sub`, `email`,
 * `roles`, `iat`, `exp` = now + `ttlSeconds` (default 12 hours), and `aud` / `iss` when given (pass
 * SLOTFLOW_JWT_AUDIENCE / SLOTFLOW_JWT_ISSUER so the server accepts it).
 */
export async function signPrincipal(
  secret: string,
  claims: { sub: string; email?: string; roles?: string[] },
  ttlSeconds = 12 * 3600,
  scope: { audience?: string | null; issuer?: string | null } = {},
): Promise<string> {
  let jwt = new SignJWT({ email: claims.email, roles: claims.roles ?? [] })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(claims.sub)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds);
  if (scope.audience) jwt = jwt.setAudience(scope.audience);
  if (scope.issuer) jwt = jwt.setIssuer(scope.issuer);
  return jwt.sign(new TextEncoder().encode(secret));
}
