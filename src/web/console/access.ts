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
 * token (src/auth/csrf.ts, which makes and checks it): a page from another origin cannot read it. A
 * POST from another origin is refused too (src/auth/same-origin.ts).
 */
import basicAuth from "basic-auth";
import { consoleCsrf, csrfMatches } from "../../auth/csrf.js";
import { sameSecret as same } from "../../auth/tokens.js";

export type ConsoleRole = "operator" | "viewer";

export interface ConsoleUser {
  role: ConsoleRole;
  /** The HTTP Basic user name as typed (may be empty); recorded as the actor of an action. */
  name: string;
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
  return consoleCsrf(adminToken, user);
}

/** True when `given` is the user's CSRF token. */
export function csrfValid(adminToken: string, user: ConsoleUser, given: unknown): boolean {
  return csrfMatches(csrfToken(adminToken, user), given);
}
