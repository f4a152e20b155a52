/**
 * The token format (issue 10 §3; src/engine/sealing/token.ts): `sfl_` + 256 random bits + a CRC-32
 * checksum. A CRC-32 detects every error burst of up to 32 bits, so every single-character typo
 * and every swap of two neighbouring characters of a token is refused offline.
 */
import test from "ava";
import fc from "fast-check";
import { randomBytes } from "node:crypto";
import { checkTokenFormat, newToken, TOKEN_LENGTH } from "../../src/engine/sealing/token.js";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

test("a new token is sfl_, 43 characters of 32 random bytes, and a 6-character checksum that holds", (t) => {
  const seen = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const token = newToken();
    t.is(token.length, TOKEN_LENGTH);
    t.regex(token, /^sfl_[A-Za-z0-9_-]{49}$/);
    t.is(Buffer.from(token.slice(4, 47), "base64url").length, 32);
    t.is(checkTokenFormat(token), "current");
    seen.add(token);
  }
  t.is(seen.size, 200);
});

test("every single-character typo and every swap of neighbouring characters is refused", (t) => {
  fc.assert(
    fc.property(fc.integer({ min: 4, max: TOKEN_LENGTH - 1 }), fc.integer({ min: 1, max: ALPHABET.length - 1 }), (i, shift) => {
      const token = newToken();
      const changed = ALPHABET[(ALPHABET.indexOf(token[i]) + shift) % ALPHABET.length];
      const typo = token.slice(0, i) + changed + token.slice(i + 1);
      if (checkTokenFormat(typo) !== "invalid") return false;
      if (i + 1 < TOKEN_LENGTH && token[i] !== token[i + 1]) {
        const swapped = token.slice(0, i) + token[i + 1] + token[i] + token.slice(i + 2);
        if (checkTokenFormat(swapped) !== "invalid") return false;
      }
      return true;
    }),
    { numRuns: 2000 },
  );
  t.pass();
});

test("old-format tokens are legacy (looked up as before); truncated, extended and foreign strings are invalid", (t) => {
  t.is(checkTokenFormat(randomBytes(32).toString("base64url")), "legacy");
  const token = newToken();
  for (const bad of [token.slice(0, -1), `${token}A`, token.replace("sfl_", "sfx_"), token.toUpperCase(), "", "sfl_", "x".repeat(53), `${token.slice(0, 52)}%`]) {
    t.is(checkTokenFormat(bad), "invalid", bad);
  }
});
