/**
 * Strings PostgreSQL cannot store (issue 8 item 5): `text` refuses U+0000, and `jsonb` refuses both
 * `\u0000` and an unpaired UTF-16 surrogate (`\ud800` alone) — JSON.parse accepts all three, so a
 * value holding one would pass a type check, be answered 202, and then fail in the database on
 * every attempt. The edge refuses such values instead (422 naming the field).
 *
 * Used by the body check of deposits and raises (body.ts); run input and `.flow` sources can call
 * the same functions.
 */

const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** True when PostgreSQL can store `text` (no U+0000, no unpaired surrogate). */
export function isStorableString(text: string): boolean {
  return !text.includes("\u0000") && !UNPAIRED_SURROGATE.test(text);
}

/**
 * Paths of every string in the JSON value `value` (object keys included) that PostgreSQL cannot
 * store, written as `name`, `name.inner`, `tags[2]` below `path`. Empty when all of it can be
 * stored. A key that cannot be stored is named by its path with the key shown JSON-escaped.
 */
export function unstorablePaths(value: unknown, path = ""): string[] {
  if (typeof value === "string") return isStorableString(value) ? [] : [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => unstorablePaths(v, `${path}[${i}]`));
  if (value !== null && typeof value === "object") {
    const out: string[] = [];
    for (const [k, v] of Object.entries(value)) {
      const name = isStorableString(k) ? k : JSON.stringify(k);
      const at = path ? `${path}.${name}` : name;
      if (!isStorableString(k)) out.push(at);
      else out.push(...unstorablePaths(v, at));
    }
    return out;
  }
  return [];
}

/** The `problem` sentence of a body or input problem about such a value. */
export const UNSTORABLE_PROBLEM = "contains a character that cannot be stored (U+0000 or an unpaired UTF-16 surrogate)";
