/**
 * The format of a callback link's token (issue 10 §3, "Tokens a secret scanner can find";
 * callback-links spec §8 "Token entropy 256 bits").
 *
 *   sfl_<43 characters: 32 random bytes, base64url><6 characters: CRC-32 checksum, base64url>
 *
 * 53 characters in all, from `[A-Za-z0-9_-]` after the prefix. The fixed prefix `sfl_` lets a
 * secret scanner find a leaked link (the gitleaks rule in docs/http-api.md matches
 * `sfl_[A-Za-z0-9_-]{49}`); the checksum is the CRC-32 (zlib's, big-endian 4 bytes, base64url) of
 * the prefix and the random part, so a mistyped or truncated token is refused as 404 by
 * `checkTokenFormat` before any database lookup. The checksum adds no secrecy: the 256 random
 * bits are the whole credential, and only the SHA-256 of the whole token is stored.
 *
 * Links minted before this format — 43 base64url characters with no prefix and no checksum —
 * are still "legacy" tokens: they cannot be checked offline, so they are looked up by hash as
 * before and keep working until their slots close.
 */
import { createHash, randomBytes } from "node:crypto";
import { crc32 } from "node:zlib";

export const TOKEN_PREFIX = "sfl_";
export const TOKEN_RANDOM_BYTES = 32;
const RANDOM_CHARS = 43;
const CHECKSUM_CHARS = 6;
/** The length of a current token: 4 + 43 + 6 = 53 characters. */
export const TOKEN_LENGTH = TOKEN_PREFIX.length + RANDOM_CHARS + CHECKSUM_CHARS;

const CURRENT_SHAPE = /^sfl_[A-Za-z0-9_-]{49}$/;
const LEGACY_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** The 6-character checksum of `prefixAndRandom` (`sfl_` + the random part). */
function checksum(prefixAndRandom: string): string {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(crc32(prefixAndRandom));
  return b.toString("base64url");
}

/** A fresh token: `sfl_` + 256 bits of cryptographic randomness (base64url) + its checksum. */
export function newToken(): string {
  const head = TOKEN_PREFIX + randomBytes(TOKEN_RANDOM_BYTES).toString("base64url");
  return head + checksum(head);
}

/**
 * What `token` can be, decided without any I/O:
 * - "current": the `sfl_` format with a valid checksum;
 * - "legacy": the 43-character format of links minted before the prefix (looked up as before);
 * - "invalid": anything else — a mistyped, truncated or made-up token; refused as 404 with no
 *   database query.
 */
export function checkTokenFormat(token: string): "current" | "legacy" | "invalid" {
  if (CURRENT_SHAPE.test(token)) {
    const head = token.slice(0, TOKEN_LENGTH - CHECKSUM_CHARS);
    return checksum(head) === token.slice(TOKEN_LENGTH - CHECKSUM_CHARS) ? "current" : "invalid";
  }
  return LEGACY_SHAPE.test(token) ? "legacy" : "invalid";
}

/** SHA-256 of a token, hex: the only stored form of a token. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}
