/**
 * The type rule of every operator, in one table (docs/language.md, "Operators"). Each rule takes
 * the operand types and gives the result type, or the reason the operands do not fit.
 *
 * Operands of arithmetic, ordering and logic must not be optional (`??` removes the `?`);
 * `==`/`!=`, string concatenation and `??` accept optional operands.
 */
import type { BinaryOp } from "./ast.js";
import { Codes } from "./codes.js";
import {
  assignable, comparable, isError, isExactly, isNumeric, isOptional, isPlainScalar, showType, T, withOptional, type Ty,
} from "./types.js";

export type OperatorResult =
  | { ok: true; type: Ty; numeric?: "int" | "decimal" }
  | { ok: false; code: string; message: string; type: Ty };

type Rule = (l: Ty, r: Ty, op: string) => OperatorResult;

function ok(type: Ty, numeric?: "int" | "decimal"): OperatorResult {
  return numeric ? { ok: true, type, numeric } : { ok: true, type };
}

function mismatch(op: string, l: Ty, r: Ty, type: Ty, hint = ""): OperatorResult {
  const optional = isOptional(l) || isOptional(r) ? " (an operand may be null: give a fallback with ??)" : hint;
  return {
    ok: false,
    code: Codes.OperatorTypes,
    message: `operator '${op}' cannot be applied to ${showType(l)} and ${showType(r)}${optional}`,
    type,
  };
}

function numericResult(l: Ty, r: Ty): OperatorResult {
  const numeric = l.kind === "int" && r.kind === "int" ? "int" : "decimal";
  return ok(numeric === "int" ? T.int : T.decimal, numeric);
}

function bothNumeric(l: Ty, r: Ty): boolean {
  return isNumeric(l) && isNumeric(r) && !isOptional(l) && !isOptional(r);
}

const arithmetic: Rule = (l, r, op) => (bothNumeric(l, r) ? numericResult(l, r) : mismatch(op, l, r, T.error));

const plus: Rule = (l, r, op) => {
  const concat = l.kind === "string" || r.kind === "string";
  if (concat) {
    const other = l.kind === "string" ? r : l;
    if (isPlainScalar(other) || other.kind === "null") return ok(T.string);
    return mismatch(op, l, r, T.string, " (only bool, int, decimal, string, datetime, date and duration values join a string)");
  }
  if (bothNumeric(l, r)) return numericResult(l, r);
  if (isExactly(l, "datetime") && isExactly(r, "duration")) return ok(T.datetime);
  if (isExactly(l, "duration") && isExactly(r, "datetime")) return ok(T.datetime);
  if (isExactly(l, "date") && isExactly(r, "duration")) return ok(T.date);
  if (isExactly(l, "duration") && isExactly(r, "date")) return ok(T.date);
  if (isExactly(l, "duration") && isExactly(r, "duration")) return ok(T.duration);
  return mismatch(op, l, r, T.error);
};

const minus: Rule = (l, r, op) => {
  if (bothNumeric(l, r)) return numericResult(l, r);
  if (isExactly(l, "datetime") && isExactly(r, "duration")) return ok(T.datetime);
  if (isExactly(l, "datetime") && isExactly(r, "datetime")) return ok(T.duration);
  if (isExactly(l, "date") && isExactly(r, "duration")) return ok(T.date);
  if (isExactly(l, "date") && isExactly(r, "date")) return ok(T.duration);
  if (isExactly(l, "duration") && isExactly(r, "duration")) return ok(T.duration);
  return mismatch(op, l, r, T.error);
};

const ordering: Rule = (l, r, op) => {
  if (bothNumeric(l, r)) return ok(T.bool);
  for (const kind of ["string", "datetime", "date", "duration"] as const) {
    if (isExactly(l, kind) && isExactly(r, kind)) return ok(T.bool);
  }
  return mismatch(op, l, r, T.bool, " (ordering compares two numbers, strings, datetimes, dates or durations)");
};

const equality: Rule = (l, r, op) => {
  if (comparable(l, r)) return ok(T.bool);
  const hint =
    l.kind === "null" || r.kind === "null"
      ? " (only an optional value can be null)"
      : " (== compares two values of the same scalar type)";
  return { ...mismatch(op, l, r, T.bool, hint), message: `operator '${op}' cannot compare ${showType(l)} with ${showType(r)}${hint}` };
};

const logic: Rule = (l, r, op) =>
  isExactly(l, "bool") && isExactly(r, "bool") ? ok(T.bool) : mismatch(op, l, r, T.bool);

const coalesce: Rule = (l, r, op) => {
  if (!isOptional(l)) {
    return {
      ok: false,
      code: Codes.CoalesceNotOptional,
      message: `the left side of '??' is ${showType(l)}, which is never null`,
      type: r,
    };
  }
  if (l.kind === "null") return ok(r);
  const base = withOptional(l, false);
  if (assignable(withOptional(r, false), base)) return ok(withOptional(base, isOptional(r)));
  if (assignable(base, withOptional(r, false))) return ok(r);
  return mismatch(op, l, r, T.error, "");
};

const RULES: Record<BinaryOp, Rule> = {
  "??": coalesce,
  "||": logic,
  "&&": logic,
  "==": equality,
  "!=": equality,
  "<": ordering,
  "<=": ordering,
  ">": ordering,
  ">=": ordering,
  "+": plus,
  "-": minus,
  "*": arithmetic,
  "/": arithmetic,
  "%": arithmetic,
};

/** The type of `l op r`. An operand of type `error` gives no new diagnostic. */
export function binaryType(op: BinaryOp, l: Ty, r: Ty): OperatorResult {
  const result = RULES[op](l, r, op);
  if (!result.ok && (isError(l) || isError(r))) return ok(result.type);
  return result;
}

/** The type of `!x` (bool) and `-x` (int or decimal). */
export function unaryType(op: "!" | "-", t: Ty): OperatorResult {
  if (isError(t)) return ok(op === "!" ? T.bool : T.error);
  if (op === "!") {
    return isExactly(t, "bool")
      ? ok(T.bool)
      : { ok: false, code: Codes.OperatorTypes, message: `operator '!' needs a bool, found ${showType(t)}`, type: T.bool };
  }
  return isNumeric(t) && !isOptional(t)
    ? ok(t)
    : { ok: false, code: Codes.OperatorTypes, message: `operator '-' needs an int or decimal, found ${showType(t)}`, type: T.error };
}
