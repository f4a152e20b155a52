/**
 * The checker's types: the value types of the language (docs/language.md, "Types") plus a few
 * that only the checker sees — the type of `null`, a slot alias, a `role()`/`user()` matcher and
 * `error` (a type already reported; it matches everything so one mistake gives one diagnostic).
 */
import type { OperandKind } from "./ast.js";
import type { TypeSpec } from "./compiled.js";

export type ScalarKind = "bool" | "int" | "decimal" | "string" | "datetime" | "date" | "duration" | "principal";

export type Ty =
  | { kind: ScalarKind; optional: boolean }
  | { kind: "list"; element: Ty; optional: boolean }
  | { kind: "entity"; name: string; optional: boolean }
  | { kind: "null" }
  | { kind: "slot"; alias: string }
  | { kind: "matcher" }
  | { kind: "error" };

/** A type that a value can have (what TypeSpec describes). */
export type ValueTy = Extract<Ty, { optional: boolean }>;

/** The scalar names that may be written in a type position (besides `list<…>` and entity names). */
export const SCALAR_NAMES: ReadonlySet<string> = new Set<ScalarKind>([
  "bool", "int", "decimal", "string", "datetime", "date", "duration", "principal",
]);

export const T = {
  bool: { kind: "bool", optional: false },
  int: { kind: "int", optional: false },
  decimal: { kind: "decimal", optional: false },
  string: { kind: "string", optional: false },
  optString: { kind: "string", optional: true },
  datetime: { kind: "datetime", optional: false },
  date: { kind: "date", optional: false },
  duration: { kind: "duration", optional: false },
  principal: { kind: "principal", optional: false },
  null: { kind: "null" },
  matcher: { kind: "matcher" },
  error: { kind: "error" },
  listOf: (element: Ty): Ty => ({ kind: "list", element, optional: false }),
} as const satisfies Record<string, Ty | ((t: Ty) => Ty)>;

export function isValue(t: Ty): t is ValueTy {
  return "optional" in t;
}

export function isError(t: Ty): boolean {
  return t.kind === "error";
}

export function isNumeric(t: Ty): boolean {
  return t.kind === "int" || t.kind === "decimal";
}

/** True for bool, int, decimal, string, datetime, date and duration (optional or not). */
export function isPlainScalar(t: Ty): boolean {
  return isValue(t) && t.kind !== "list" && t.kind !== "entity" && t.kind !== "principal";
}

export function isOptional(t: Ty): boolean {
  return t.kind === "null" || (isValue(t) && t.optional);
}

/** `t` with its `?` set to `optional` (types without `?` are returned unchanged). */
export function withOptional(t: Ty, optional: boolean): Ty {
  return isValue(t) ? ({ ...t, optional } as Ty) : t;
}

/** True when `t` is `kind` and not optional. */
export function isExactly(t: Ty, kind: Ty["kind"]): boolean {
  return t.kind === kind && !isOptional(t);
}

/** How a type reads in a message: `int`, `string?`, `list<string>`, `Vendor`. */
export function showType(t: Ty): string {
  switch (t.kind) {
    case "list":
      return `list<${showType(t.element)}>${t.optional ? "?" : ""}`;
    case "entity":
      return `${t.name}${t.optional ? "?" : ""}`;
    case "null":
      return "null";
    case "slot":
      return `slot alias '${t.alias}'`;
    case "matcher":
      return "a Candidates matcher";
    case "error":
      return "an unknown type";
    default:
      return `${t.kind}${t.optional ? "?" : ""}`;
  }
}

/**
 * Whether a value of type `from` may be stored where `to` is expected: same type, `int` into
 * `decimal`, a non-optional into an optional, `null` into an optional; lists element-wise.
 */
export function assignable(from: Ty, to: Ty): boolean {
  if (from.kind === "error" || to.kind === "error") return true;
  if (!isValue(to)) return false;
  if (from.kind === "null") return to.optional;
  if (!isValue(from)) return false;
  if (from.optional && !to.optional) return false;
  if (from.kind === "int" && to.kind === "decimal") return true;
  if (from.kind !== to.kind) return false;
  if (from.kind === "list" && to.kind === "list") return assignable(from.element, to.element);
  if (from.kind === "entity" && to.kind === "entity") return from.name === to.name;
  return true;
}

/**
 * Whether `==`/`!=` may compare `a` and `b`: two plain scalars of the same kind (`int` and
 * `decimal` mix), either optional; `null` against an optional plain scalar.
 */
export function comparable(a: Ty, b: Ty): boolean {
  if (a.kind === "error" || b.kind === "error") return true;
  if (a.kind === "null") return b.kind === "null" || (isPlainScalar(b) && isOptional(b));
  if (b.kind === "null") return isPlainScalar(a) && isOptional(a);
  if (!isPlainScalar(a) || !isPlainScalar(b)) return false;
  return a.kind === b.kind || (isNumeric(a) && isNumeric(b));
}

/** The operand kind recorded on a BinaryExpr. */
export function operandKind(t: Ty): OperandKind {
  switch (t.kind) {
    case "slot":
    case "matcher":
    case "error":
      return "null";
    default:
      return t.kind;
  }
}

/** The TypeSpec (compiled form) of a value type; `error` never reaches here in a valid file. */
export function toTypeSpec(t: Ty): TypeSpec {
  switch (t.kind) {
    case "list":
      return { kind: "list", element: toTypeSpec(t.element), optional: t.optional };
    case "entity":
      return { kind: "entity", name: t.name, optional: t.optional };
    case "bool":
    case "int":
    case "decimal":
    case "string":
    case "datetime":
    case "date":
    case "duration":
    case "principal":
      return { kind: t.kind, optional: t.optional };
    default:
      throw new Error(`internal: type ${showType(t)} has no compiled form`);
  }
}
