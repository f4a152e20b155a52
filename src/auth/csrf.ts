/**
 * The one CSRF scheme of every browser form (issue 39 item 1: three schemes became one module that
 * makes and checks every token). A token is either
 *   - random and kept server-side by the caller: the session's (`slotflow_session`, 256 bits,
 *     identity/session.ts) and the development sign-in's (sealed in its login cookie); or
 *   - derived (`derivedCsrf`): HMAC-SHA256 of a subject under a key derived from a server secret and
 *     a purpose — the console's (purpose `slotflow-console-csrf`, the admin token, the role and user
 *     name) and the responder page's forward form (`slotflow-forward-csrf`, the sealing key, the
 *     link token's SHA-256). It stays the same while the page is open and no other site can compute it.
 * Every form carries it in its `csrf` field (the logout and `POST /api/runs/…/events` from a
 * session also as the `X-CSRF-Token` header); `csrfMatches` compares in constant time (SHA-256 of
 * both sides, so neither length nor content leaks through timing). base64url.
 */
import { createHash, createHmac } from "node:crypto";
import { sameSecret } from "./tokens.js";

/** A fresh random token (256 bits, base64url). */
export { randomCsrf } from "./tokens.js";

/** HMAC-SHA256 of `subject` under SHA-256(`purpose` NUL `secret`), base64url. */
export function derivedCsrf(purpose: string, secret: string, subject: string | Buffer): string {
  const key = createHash("sha256").update(`${purpose}\u0000${secret}`).digest();
  return createHmac("sha256", key).update(subject).digest("base64url");
}

/** True when `given` is a non-empty string equal to `expected` (compared in constant time). */
export function csrfMatches(expected: string | null, given: unknown): boolean {
  if (typeof given !== "string" || given.length === 0 || expected === null) return false;
  return sameSecret(given, expected);
}

/** The CSRF token of the responder page's forward form of link `token` (v0.4 "Send this to someone else"). */
export function forwardCsrf(sealKey: string, token: string): string {
  return derivedCsrf("slotflow-forward-csrf", sealKey, createHash("sha256").update(token).digest());
}

/** The CSRF token of a console user (stable for the same admin token, role and user name; issue 23). */
export function consoleCsrf(adminToken: string, user: { role: string; name: string }): string {
  return derivedCsrf("slotflow-console-csrf", adminToken, `${user.role}\u0000${user.name}`);
}
