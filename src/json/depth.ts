/**
 * Nesting depth of JSON (issue 16 item 1): one bound for every JSON the server reads, and a bound
 * on every recursive walk of a value that came from a request.
 *
 * - `jsonTextDepth(text, stopAbove)` measures the nesting of raw JSON text with an iterative,
 *   string-aware scan (brackets inside strings, and escaped quotes, do not count), before
 *   `JSON.parse` or any walk sees it; request-body.ts refuses a body deeper than
 *   `SLOTFLOW_MAX_INPUT_DEPTH` (422 `invalid-body` naming the limit).
 * - `valueDepthExceeds(value, limit)` is the same measure over a parsed value, iterative, for
 *   checks that receive values without their text (body.ts: the testing kit, the engine).
 * - `nextDepth(depth)` is what every recursive walk of request data calls on the way down: past
 *   `MAX_WALK_DEPTH` it throws `TooDeepError` (a RangeError naming the bound) instead of
 *   exhausting the stack. Values reaching a walk were already checked against `MAX_JSON_DEPTH`
 *   (at most 512), and the engine wraps them a few levels at most, so a walk never hits the bound
 *   on accepted input. test/engine/recursion-lint.test.ts keeps every recursive function with a
 *   `depth` parameter.
 *
 * Depth counts containers: `1` and `"x"` are depth 0, `{}` and `[1]` depth 1, `{"a":[1]}` depth 2.
 */

/** The highest nesting any JSON value may have anywhere in slotflow (SLOTFLOW_MAX_INPUT_DEPTH's ceiling). */
export const MAX_JSON_DEPTH = 512;

/** The bound on every recursive walk of a JSON value (above MAX_JSON_DEPTH: the engine's own wrapping). */
export const MAX_WALK_DEPTH = 1024;

/** A recursive walk met a value nested deeper than MAX_WALK_DEPTH. */
export class TooDeepError extends RangeError {
  override name = "TooDeepError";
  constructor() {
    super(`A JSON value nests deeper than ${MAX_WALK_DEPTH} levels; slotflow does not walk it.`);
  }
}

/** `depth + 1`, or throws `TooDeepError` past MAX_WALK_DEPTH. */
export function nextDepth(depth: number): number {
  if (depth >= MAX_WALK_DEPTH) throw new TooDeepError();
  return depth + 1;
}

/**
 * The nesting depth of the JSON text `text` (0 for a scalar), scanning once without recursion.
 * Stops as soon as the depth passes `stopAbove` and returns that depth (`stopAbove + 1`). Text
 * that is not JSON is measured all the same (brackets outside strings); JSON.parse judges it later.
 */
export function jsonTextDepth(text: string, stopAbove = Infinity): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      depth++;
      if (depth > max) {
        max = depth;
        if (max > stopAbove) return max;
      }
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth = Math.max(0, depth - 1);
  }
  return max;
}

/** True when the parsed JSON value `value` nests deeper than `limit` (iterative; never throws). */
export function valueDepthExceeds(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (d + 1 > limit) return true;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const child of children) if (child !== null && typeof child === "object") stack.push([child, d + 1]);
  }
  return false;
}
