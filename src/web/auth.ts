/**
 * Bearer authentication: the admin token (`SLOTFLOW_ADMIN_TOKEN`) for the admin API, and
 * principals' HS256 JWTs (`SLOTFLOW_JWT_SECRET`, verified with jose) for the ordinary raise path.
 * JWT claims: `sub` (the principal id, required), `email` (string, optional), `roles` (array of
 * strings, optional), `exp` (honoured when present).
 */
import { timingSafeEqual, createHash } from "node:crypto";
import { jwtVerify, SignJWT } from "jose";
import type { Context } from "koa";
import type { PrincipalClaims } from "../engine/commands/types.js";
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";

function bearer(ctx: Context): string | null {
  const m = /^Bearer\s+(\S+)$/i.exec(ctx.get("authorization"));
  return m ? m[1] : null;
}

const unauthorized = (detail: string) => new RefusalError(refuse(RefusalCode.Unauthorized, detail));

/** Throws 401 unless the request carries the admin token. */
export function requireAdmin(ctx: Context, adminToken: string): void {
  const given = bearer(ctx);
  const digest = (s: string) => createHash("sha256").update(s).digest();
  if (!given || !timingSafeEqual(digest(given), digest(adminToken))) {
    throw unauthorized("This endpoint needs the admin bearer token (Authorization: Bearer $SLOTFLOW_ADMIN_TOKEN).");
  }
}

/** Verifies a principal's JWT; throws 401 when it is missing, invalid or expired. */
export async function verifyPrincipal(ctx: Context, secret: string): Promise<PrincipalClaims> {
  const token = bearer(ctx);
  if (!token) throw unauthorized("Sign in: send a principal's JWT as Authorization: Bearer <jwt>.");
  try {
    const { payload } = await jwtVerify(token, new TextEncoder().encode(secret), { algorithms: ["HS256"] });
    if (typeof payload.sub !== "string" || payload.sub === "") throw new Error("no sub");
    const roles = Array.isArray(payload.roles) ? payload.roles.filter((r): r is string => typeof r === "string") : [];
    const email = typeof payload.email === "string" ? payload.email : null;
    return { id: payload.sub, email, roles };
  } catch {
    throw unauthorized("The bearer JWT is not valid (HS256, signed with SLOTFLOW_JWT_SECRET, with a sub claim, not expired).");
  }
}

/** Signs a principal JWT (for `slotflow token` and tests). `ttlSeconds` defaults to 12 hours. */
export async function signPrincipal(secret: string, claims: { sub: string; email?: string; roles?: string[] }, ttlSeconds = 12 * 3600): Promise<string> {
  return new SignJWT({ email: claims.email, roles: claims.roles ?? [] })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(claims.sub)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
    .sign(new TextEncoder().encode(secret));
}
