/**
 * `Idempotency-Key` on the callback endpoint (HTTP API "Idempotent retries"; the IETF httpapi
 * idempotency-key draft). A responder who lost the answer to a deposit — a dropped connection, a
 * 202, a 503 — retries with the same key and learns the outcome of their own first request.
 *
 * What is kept: the deposit that burns a link stores, on the link row, the SHA-256 (hex) of the
 * request's key and of its body in canonical form. Never the key. Kept as long as the link row,
 * which outlives the 24 hours the contract promises.
 *
 * A later deposit to the same link with the same key:
 *   - same body (canonical JSON: key order and spacing do not matter) → the first one's outcome,
 *     200 `{"status":"completed"}`, and nothing is applied again;
 *   - another body → 422 `idempotency-key-reused`, nothing changed.
 * Any other request to a burned link — another key, or none — is still 410 `link-burned`: a key
 * proves only that the retry repeats the request that burned the link, and lets nobody else in.
 *
 * Only the burning deposit is remembered. A refused deposit changed nothing, so its retry is
 * simply judged again (it may succeed now that, say, the slot has opened); and while the first
 * request is still queued (it answered 202), the retry is queued too and, applied after it, finds
 * the link burned under its own key: both answer "completed", the slot completes once.
 */
import { createHash } from "node:crypto";
import { RefusalCode, refuse, type Refusal } from "../refusals.js";
import { nextDepth } from "../../json/depth.js";

/** The two hashes a deposit carries when its request had an `Idempotency-Key`. */
export interface IdempotencyFingerprint {
  /** SHA-256 hex of the key's ASCII bytes. */
  keySha256: string;
  /** SHA-256 hex of the body in canonical JSON (`null` when the request had no body). */
  bodySha256: string;
}

/** 1–255 printable ASCII characters (0x20–0x7E), as the contract says. */
const KEY_SHAPE = /^[\x20-\x7e]{1,255}$/;

/**
 * Reads the header value. `undefined` (no header) → `null`; a malformed value → a refusal, 400
 * `invalid-idempotency-key`, with nothing changed.
 */
export function fingerprint(header: string | undefined, body: unknown): IdempotencyFingerprint | null | Refusal {
  if (header === undefined) return null;
  if (!KEY_SHAPE.test(header)) {
    return refuse(RefusalCode.InvalidIdempotencyKey, "An Idempotency-Key header must be 1 to 255 printable ASCII characters.");
  }
  return { keySha256: sha256(header), bodySha256: sha256(canonicalJson(body ?? null)) };
}

/**
 * For a deposit to a burned link: the outcome its key earns, or null when the key does not match
 * the burning request's (the ordinary 410 applies). `stored` is what the link row holds.
 */
export function replay(
  stored: { idempotencyKeySha256: string | null; idempotencyBodySha256: string | null },
  request: IdempotencyFingerprint | null | undefined,
): "completed" | Refusal | null {
  if (!request || stored.idempotencyKeySha256 === null || stored.idempotencyKeySha256 !== request.keySha256) return null;
  if (stored.idempotencyBodySha256 === request.bodySha256) return "completed";
  return refuse(
    RefusalCode.IdempotencyKeyReused,
    "This Idempotency-Key was already used with a different body. Send the original body to learn its outcome, or use a new key for a new request.",
  );
}

function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/**
 * JSON with object keys sorted at every depth, so the same value always gives the same text.
 * Written without building objects, so keys such as `__proto__` stay ordinary keys.
 */
export function canonicalJson(value: unknown, depth = 0): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  const below = nextDepth(depth); // bounded (issue 16): TooDeepError past MAX_WALK_DEPTH
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v, below)).join(",")}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k], below)}`).join(",")}}`;
}
