/**
 * Text PostgreSQL can store (issue 8 items 5 and 15). A `text` or `jsonb` value cannot hold
 * U+0000, and a UTF-16 string with a lone surrogate (`\ud800` not followed by a low surrogate, or a
 * low surrogate on its own) has no UTF-8 encoding. JSON.parse accepts all of them, so such a value
 * would pass every type check, be queued (202), and then fail in the database on every attempt —
 * so it is refused where it enters: callback and raise bodies (body.ts), run input (input.ts) and
 * `.flow` sources (lang/compile.ts), each with a 422 naming the field or position.
 *
 * Positions are offsets in UTF-16 code units (JavaScript string indices).
 */
import { nextDepth } from "./depth.js";

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
const SUSPECT = /[\u0000\ud800-\udfff]/;

/** Every unstorable character of `text`, in order (at most `limit` of them). */
export function unstorableCharacters(text: string, limit = Infinity): Unstorable[] {
  const out: Unstorable[] = [];
  // Fast path: most text has no NUL and no surrogate at all.
  if (!SUSPECT.test(text)) return out;
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

/** True when PostgreSQL can store `text` (no U+0000, no unpaired surrogate). */
export function isStorableString(text: string): boolean {
  return !SUSPECT.test(text) || unstorable(text) === null;
}

/**
 * Paths of every string in the JSON value `value` (object keys included) that PostgreSQL cannot
 * store, written as `name`, `name.inner`, `tags[2]` below `path`. Empty when all of it can be
 * stored. A key that cannot be stored is named by its path with the key shown JSON-escaped.
 * `depth` is the nesting of `value`; past MAX_WALK_DEPTH it throws `TooDeepError` (depth.ts).
 */
export function unstorablePaths(value: unknown, path = "", depth = 0): string[] {
  if (typeof value === "string") return isStorableString(value) ? [] : [path];
  if (Array.isArray(value)) {
    const below = nextDepth(depth);
    return value.flatMap((v, i) => unstorablePaths(v, `${path}[${i}]`, below));
  }
  if (value !== null && typeof value === "object") {
    const below = nextDepth(depth);
    const out: string[] = [];
    for (const [k, v] of Object.entries(value)) {
      const name = isStorableString(k) ? k : JSON.stringify(k);
      const at = path ? `${path}.${name}` : name;
      if (!isStorableString(k)) out.push(at);
      else out.push(...unstorablePaths(v, at, below));
    }
    return out;
  }
  return [];
}

/** The `problem` sentence of a body or input problem about such a value. */
export const UNSTORABLE_PROBLEM = "contains a character that cannot be stored (U+0000 or an unpaired UTF-16 surrogate)";
