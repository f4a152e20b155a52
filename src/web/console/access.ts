/**
 * Who is at the console (issue 23; interfaces.md "The console"): HTTP Basic, any user name; the
 * password decides the role —
 *   SLOTFLOW_ADMIN_TOKEN  → `operator` (sees everything, may revoke a link and cancel a run);
 *   SLOTFLOW_VIEWER_TOKEN → `viewer` (sees everything, every POST is 403);
 *   anything else, or no credentials → null (the caller answers 401 with `WWW-Authenticate: Basic`).
 * Passwords are compared in constant time (SHA-256 of both sides). When both tokens are equal, the
 * admin token wins (operator).
 *
 * CSRF (every console POST): a browser resends Basic credentials on a cross-site form post, so each
 * form carries `csrf`, an HMAC-SHA256 of the role and user name under a key derived from the admin
 * token: a page from another origin cannot read it. A POST whose `Origin` header names another
 * origin is refused too.
 */
import basicAuth from "basic-auth";
import { createHash, createHmac, timingSafeEqual } from "node:crypto";

export type ConsoleRole = "operator" | "viewer";

export interface ConsoleUser {
  role: ConsoleRole;
  /** The HTTP Basic user name as typed (may be empty); recorded as the actor of an action. */
  name: string;
}

function same(a: string, b: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/** The signed-in user of an `Authorization` header, or null. */
export function consoleUser(authorization: string | undefined, tokens: { adminToken: string; viewerToken: string | null }): ConsoleUser | null {
  if (!authorization) return null;
  const basic = basicAuth.parse(authorization);
  if (!basic) return null;
  const name = basic.name.slice(0, 100);
  if (tokens.adminToken && same(basic.pass, tokens.adminToken)) return { role: "operator", name };
  if (tokens.viewerToken && same(basic.pass, tokens.viewerToken)) return { role: "viewer", name };
  return null;
}

/** The actor recorded in a run's history for an operator's action. */
export function actorOf(user: ConsoleUser): string {
  return `console operator ${JSON.stringify(user.name || "(no user name)")}`;
}

/** The CSRF token of a signed-in user (stable for the same admin token, role and user name). */
export function csrfToken(adminToken: string, user: ConsoleUser): string {
  const key = createHash("sha256").update(`slotflow-console-csrf\u0000${adminToken}`).digest();
  return createHmac("sha256", key).update(`${user.role}\u0000${user.name}`).digest("base64url");
}

/** True when `given` is the user's CSRF token. */
export function csrfValid(adminToken: string, user: ConsoleUser, given: unknown): boolean {
  return typeof given === "string" && given.length > 0 && same(given, csrfToken(adminToken, user));
}
