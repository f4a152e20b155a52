/**
 * Bearer tokens and shared secrets (issue 39 item 1): the one reading of `Authorization: Bearer`,
 * the one constant-time comparison (SHA-256 of both sides, so neither length nor content leaks
 * through timing), and the configured tokens that admit a caller — the admin token
 * (SLOTFLOW_ADMIN_TOKEN: the admin API, the console's operator, MCP without its own token), the
 * task workers' (SLOTFLOW_WORKER_TOKEN) and MCP's (SLOTFLOW_MCP_TOKEN). A token is never echoed.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Context } from "koa";
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(authorization: string | undefined): string | null {
  const m = /^Bearer\s+(\S+)$/i.exec(authorization ?? "");
  return m ? m[1]! : null;
}

/** True when `a` equals `b`, compared in constant time. */
export function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/** True when `given` is one of `accepted` (each compared in constant time, all of them compared). */
export function oneOf(given: string | null, accepted: readonly string[]): boolean {
  let ok = false;
  if (given !== null) for (const t of accepted) if (t && sameSecret(given, t)) ok = true;
  return ok;
}

/** A fresh random token: 256 bits, base64url. */
export function randomCsrf(): string {
  return randomBytes(32).toString("base64url");
}

const unauthorized = (detail: string) => new RefusalError(refuse(RefusalCode.Unauthorized, detail));

/** Throws 401 unless `authorization` carries the admin token (the admin API). */
export function requireAdmin(ctx: Pick<Context, "get">, adminToken: string): void {
  if (!oneOf(bearerToken(ctx.get("authorization")), [adminToken])) {
    throw unauthorized("This endpoint needs the admin bearer token (Authorization: Bearer $SLOTFLOW_ADMIN_TOKEN).");
  }
}

/**
 * Throws 401 unless the request carries a task worker's token (v0.5 SDK, issue 41 item 3): one of
 * `workerTokens` (SLOTFLOW_WORKER_TOKEN, comma-separated for rotation), or — outside production —
 * the admin token when none is configured. In production without SLOTFLOW_WORKER_TOKEN the task
 * API takes no token at all (the admin token is never a worker's there).
 */
export function requireWorker(ctx: Pick<Context, "get">, workerTokens: readonly string[], adminToken: string, production = false): void {
  if (workerTokens.length === 0 && production) {
    throw unauthorized("The task API takes only SLOTFLOW_WORKER_TOKEN in production, and this server has none: set it (comma-separated tokens for rotation).");
  }
  const accepted = workerTokens.length > 0 ? workerTokens : [adminToken];
  if (!oneOf(bearerToken(ctx.get("authorization")), accepted)) throw unauthorized("The task API needs a worker's bearer token (Authorization: Bearer $SLOTFLOW_WORKER_TOKEN).");
}
