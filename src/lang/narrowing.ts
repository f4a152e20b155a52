/**
 * Null checks narrow (language reference, "Optional types"): what a condition proves non-null.
 * A *path* is a name or a field path over a name (`x`, `v.o`). In `a && b`, `b` is checked with the
 * paths `a` proves non-null when it holds; in `a || b`, with those `a` proves when it fails; the
 * `then` block of `if (c)` with those `c` proves when it holds, less any path the block assigns
 * (check-stmt.ts). Types only: the interpreter's `&&`/`||` already skip the right side.
 * Where a value may still be null, `nullFix` words the fix that ends the error.
 *
 * Walks the condition's syntax tree, whose nesting the parser bounds (FLOW007).
 */
import type { Expr, Statement } from "./ast.js";
import { isOptional, type Ty } from "./types.js";

/** `a.b.c` for a name or a member chain over a name; null for anything else. */
export function pathText(e: Expr): string | null {
  if (e.kind === "name") return e.name;
  if (e.kind === "member") {
    const head = pathText(e.object);
    return head === null ? null : `${head}.${e.property.name}`;
  }
  return null;
}

const isNull = (e: Expr) => e.kind === "literal" && e.type === "null";

/** The paths that are not null whenever `e` evaluates to `outcome`. */
export function nonNullWhen(e: Expr, outcome: boolean): string[] {
  if (e.kind === "unary" && e.op === "!") return nonNullWhen(e.operand, !outcome);
  if (e.kind !== "binary") return [];
  if (e.op === "!=" || e.op === "==") {
    // `p != null` holds, or `p == null` fails: p is not null.
    if (outcome !== (e.op === "!=")) return [];
    const path = isNull(e.right) ? pathText(e.left) : isNull(e.left) ? pathText(e.right) : null;
    return path === null ? [] : [path];
  }
  if (e.op === "&&" && outcome) return [...nonNullWhen(e.left, true), ...nonNullWhen(e.right, true)];
  if (e.op === "||" && !outcome) return [...nonNullWhen(e.left, false), ...nonNullWhen(e.right, false)];
  return [];
}

/** `known` plus `more` (the same set when `more` is empty). */
export function withNonNull(known: ReadonlySet<string> | undefined, more: string[]): ReadonlySet<string> | undefined {
  if (more.length === 0) return known;
  return new Set([...(known ?? []), ...more]);
}

/** The paths a block assigns anywhere inside it (`x = …` gives `x`, `v.o = …` gives `v.o`). */
export function assignedIn(statements: Statement[], out = new Set<string>()): Set<string> {
  for (const s of statements) {
    if (s.kind === "assign") out.add(s.target.map((t) => t.name).join("."));
    if (s.kind === "if") {
      assignedIn(s.then, out);
      if (s.else) assignedIn(s.else, out);
    }
  }
  return out;
}

/**
 * The end of an error about `e` of type `t` where a value that may be null is not accepted: how to
 * fix it (empty when `t` is not optional).
 */
export function nullFix(e: Expr, t: Ty): string {
  if (!isOptional(t) || t.kind === "null") return "";
  const path = pathText(e);
  return path === null
    ? " (it may be null: give a fallback with ??)"
    : ` (it may be null: check it first (\`${path} != null && …\`) or give a fallback with ??)`;
}
