/**
 * Text PostgreSQL can store (issue 8 item 15). A `text` or `jsonb` value cannot hold U+0000, and a
 * UTF-16 string with a lone surrogate (`\ud800` not followed by a low surrogate, or a low surrogate
 * on its own) has no UTF-8 encoding. Such a value would pass every type check, be queued, and then
 * fail in the database on every attempt — so it is refused where it enters: run input (input.ts)
 * and `.flow` sources (lang/compile.ts); the callback and raise bodies use the same rule.
 *
 * Positions are offsets in UTF-16 code units (JavaScript string indices).
 */

/** Why `text` cannot be stored, and where; null when it can. */
export interface Unstorable {
  /** Offset of the offending code unit. */
  offset: number;
  /** A short phrase for messages: "contains U+0000 (NUL)" or "contains a lone surrogate (U+D800)". */
  problem: string;
}

// NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one
// (no `u` flag: the pattern must see code units, not code points).
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Every unstorable character of `text`, in order (at most `limit` of them). */
export function unstorableCharacters(text: string, limit = Infinity): Unstorable[] {
  const out: Unstorable[] = [];
  // Fast path: most text has no NUL and no surrogate at all.
  if (!/[\u0000\ud800-\udfff]/.test(text)) return out;
  for (const m of text.matchAll(UNSTORABLE)) {
    if (out.length >= limit) break;
    const unit = m[0].charCodeAt(0);
    out.push({
      offset: m.index,
      problem: unit === 0 ? "contains U+0000 (NUL), which cannot be stored" : `contains a lone surrogate (U+${unit.toString(16).toUpperCase()}), which is not valid Unicode text`,
    });
  }
  return out;
}

/** The first unstorable character of `text`, or null when all of it can be stored. */
export function unstorable(text: string): Unstorable | null {
  return unstorableCharacters(text, 1)[0] ?? null;
}
