/**
 * The CSRF token of the responder page's forward form (v0.4 "Send this to someone else"; forward.ts
 * checks it): HMAC-SHA256 of the link token's SHA-256 under a key derived from the sealing key — it
 * differs per link, stays the same while the page is open, and no other site can compute it.
 * base64url.
 */
import { createHash, createHmac } from "node:crypto";

export function forwardCsrf(sealKey: string, token: string): string {
  const key = createHash("sha256").update(`slotflow-forward-csrf\u0000${sealKey}`).digest();
  return createHmac("sha256", key).update(createHash("sha256").update(token).digest()).digest("base64url");
}
