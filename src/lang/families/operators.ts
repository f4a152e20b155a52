/**
 * The operator family (docs/language.md, "Operators"; issue 39 item 3): every operator's type rule
 * and its evaluation side by side, one entry per operator in `BINARY` and `UNARY` (the model is
 * cel-js, whose operators each carry a check and an evaluate). The checker (check-expr.ts) asks
 * `binaryType`/`unaryType`; the interpreter (runtime/interpreter.ts) calls an entry's `evaluate`.
 * An operator has no emitted form of its own: the compiled workflow keeps the checked expression
 * (with `numeric` set by the check).
 *
 * Check: each rule takes the operand types and gives the result type, or the reason the operands
 * do not fit. Operands of arithmetic, ordering and logic must not be optional (`??` removes the
 * `?`); `==`/`!=`, string concatenation and `??` accept optional operands.
 *
 * Evaluate: the left operand is evaluated first; the right one only when the operator needs it
 * (`&&`, `||` and `??` short-circuit). Integer overflow (beyond ±(2^53−1)), division by zero and a
 * null operand of arithmetic, ordering or negation throw `RuntimeFault` (language reference
 * "Errors"); null joins a string as empty text.
 */
import type { BinaryOp, Range } from "../ast.js";
import { Codes } from "../codes.js";
import { RuntimeFault } from "../runtime/fault.js";
import { CalendarDate, Duration, equals, type Value } from "../runtime/values.js";
import {
  assignable, comparable, isError, isExactly, isNumeric, isOptional, isPlainScalar, showType, T, withOptional, type Ty,
} from "../types.js";

export type OperatorResult =
  | { ok: true; type: Ty; numeric?: "int" | "decimal" }
  | { ok: false; code: string; message: string; type: Ty };

/** A binary operator's type rule: the operand types (and the operator as written) to the result. */
export type Rule = (l: Ty, r: Ty, op: string) => OperatorResult;

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

/** Where a binary operator is evaluated: the expression's operator, place and checked numeric kind. */
export interface OperatorSite {
  op: BinaryOp;
  range: Range;
  /** Set by the checker for arithmetic: "int" makes `+ - *` check overflow and `/` truncate. */
  numeric?: "int" | "decimal";
  /** A value's text where it joins a string (the World's `numberText`/`valueText` when set). */
  joinText(v: Value): string;
}

/** One binary operator: its type rule and its evaluation. */
export interface BinaryOperator {
  check: Rule;
  /** The value of `left op right`; `right()` evaluates the right operand (call it at most once). */
  evaluate(left: Value, right: () => Value, site: OperatorSite): Value;
}

function checkInt(n: number, range: Range): number {
  if (!Number.isSafeInteger(n)) throw new RuntimeFault("integer overflow (beyond ±(2^53−1))", range);
  return n;
}

function arithmeticValue(site: OperatorSite, l: Value, r: Value): Value {
  const { op, range } = site;
  if (l === null || r === null) throw new RuntimeFault(`arithmetic "${op}" with null`, range);
  if (l instanceof Duration && typeof r === "number" && (op === "*" || op === "/")) {
    return new Duration(op === "*" ? l.ms * r : l.ms / r);
  }
  const a = l as number;
  const b = r as number;
  const int = site.numeric === "int";
  switch (op) {
    case "+":
      return int ? checkInt(a + b, range) : a + b;
    case "-":
      return int ? checkInt(a - b, range) : a - b;
    case "*":
      return int ? checkInt(a * b, range) : a * b;
    case "/":
      if (b === 0) throw new RuntimeFault("division by zero", range);
      return int ? Math.trunc(a / b) : a / b;
    case "%":
      if (b === 0) throw new RuntimeFault("division by zero", range);
      return a % b;
  }
  throw new RuntimeFault(`unsupported operator "${op}"`, range);
}

function ordinal(v: Value): number | string {
  if (v instanceof Date) return v.getTime();
  if (v instanceof Duration) return v.ms;
  if (v instanceof CalendarDate) return v.day;
  return v as number | string;
}

function orderingValue(l: Value, right: () => Value, site: OperatorSite): Value {
  const r = right();
  const { op, range } = site;
  if (l === null || r === null) throw new RuntimeFault(`comparison "${op}" with null`, range);
  const [a, b] = [ordinal(l), ordinal(r)];
  return op === "<" ? a < b : op === "<=" ? a <= b : op === ">" ? a > b : a >= b;
}

function plusValue(l: Value, right: () => Value, site: OperatorSite): Value {
  const r = right();
  if (typeof l === "string" || typeof r === "string") return site.joinText(l) + site.joinText(r);
  if (l instanceof Date && r instanceof Duration) return new Date(l.getTime() + r.ms);
  if (l instanceof Duration && r instanceof Date) return new Date(r.getTime() + l.ms);
  if (l instanceof Duration && r instanceof Duration) return new Duration(l.ms + r.ms);
  if (l instanceof CalendarDate && r instanceof Duration) return l.plus(r.ms);
  if (l instanceof Duration && r instanceof CalendarDate) return r.plus(l.ms);
  return arithmeticValue(site, l, r);
}

function minusValue(l: Value, right: () => Value, site: OperatorSite): Value {
  const r = right();
  if (l instanceof Date && r instanceof Duration) return new Date(l.getTime() - r.ms);
  if (l instanceof Date && r instanceof Date) return new Duration(l.getTime() - r.getTime());
  if (l instanceof Duration && r instanceof Duration) return new Duration(l.ms - r.ms);
  if (l instanceof CalendarDate && r instanceof Duration) return l.plus(-r.ms);
  if (l instanceof CalendarDate && r instanceof CalendarDate) return l.minus(r);
  return arithmeticValue(site, l, r);
}

const arithmeticOp: BinaryOperator = { check: arithmetic, evaluate: (l, right, site) => arithmeticValue(site, l, right()) };
const orderingOp: BinaryOperator = { check: ordering, evaluate: orderingValue };

/** Every binary operator: its check and its evaluation (docs/language.md, "Operators"). */
export const BINARY: Readonly<Record<BinaryOp, BinaryOperator>> = {
  "??": { check: coalesce, evaluate: (l, right) => (l !== null ? l : right()) },
  "||": { check: logic, evaluate: (l, right) => Boolean(l) || Boolean(right()) },
  "&&": { check: logic, evaluate: (l, right) => Boolean(l) && Boolean(right()) },
  "==": { check: equality, evaluate: (l, right) => equals(l, right()) },
  "!=": { check: equality, evaluate: (l, right) => !equals(l, right()) },
  "<": orderingOp,
  "<=": orderingOp,
  ">": orderingOp,
  ">=": orderingOp,
  "+": { check: plus, evaluate: plusValue },
  "-": { check: minus, evaluate: minusValue },
  "*": arithmeticOp,
  "/": arithmeticOp,
  "%": arithmeticOp,
};

/** The type of `l op r`. An operand of type `error` gives no new diagnostic. */
export function binaryType(op: BinaryOp, l: Ty, r: Ty): OperatorResult {
  const result = BINARY[op].check(l, r, op);
  if (!result.ok && (isError(l) || isError(r))) return ok(result.type);
  return result;
}

/** One unary operator: its type rule (the operand not of type `error`) and its evaluation. */
export interface UnaryOperator {
  check(t: Ty): OperatorResult;
  evaluate(v: Value, range: Range): Value;
}

/** `!x` (bool) and `-x` (int, decimal or duration at run time). */
export const UNARY: Readonly<Record<"!" | "-", UnaryOperator>> = {
  "!": {
    check: (t) =>
      isExactly(t, "bool")
        ? ok(T.bool)
        : { ok: false, code: Codes.OperatorTypes, message: `operator '!' needs a bool, found ${showType(t)}`, type: T.bool },
    evaluate: (v) => !v,
  },
  "-": {
    check: (t) =>
      isNumeric(t) && !isOptional(t)
        ? ok(t)
        : { ok: false, code: Codes.OperatorTypes, message: `operator '-' needs an int or decimal, found ${showType(t)}`, type: T.error },
    evaluate: (v, range) => {
      if (v instanceof Duration) return new Duration(-v.ms);
      if (v === null) throw new RuntimeFault("negation of null", range);
      return -(v as number);
    },
  },
};

/** The type of `!x` (bool) and `-x` (int or decimal). An operand of type `error` gives no new diagnostic. */
export function unaryType(op: "!" | "-", t: Ty): OperatorResult {
  if (isError(t)) return ok(op === "!" ? T.bool : T.error);
  return UNARY[op].check(t);
}
