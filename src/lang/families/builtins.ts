/**
 * The built-in functions (docs/language.md, "Built-in functions"). A call `f(…)` whose callee is a
 * plain name always means the built-in of that name; variables are never callable.
 *
 * | function | type | notes |
 * |---|---|---|
 * | `now()` | `datetime` | the time of the current step (one value for the whole step) |
 * | `today()` | `date` | the calendar day of `now()` in UTC |
 * | `len(s)` / `len(xs)` | `string -> int`, `list<T> -> int` | UTF-16 code units for a string |
 * | `lower(s)`, `upper(s)` | `string -> string` | Unicode case mapping, no locale |
 * | `contains(xs, x)` | `list<T>, T -> bool` | element equality as `==` |
 * | `isEmailAddress(s)` | `string -> bool` | exactly one plain address, the rule of `send email to` (lang/runtime/email-address.ts) |
 * | `role(r)`, `user(id)` | `string -> matcher` | only as the entries of `Candidates` |
 * | `anyone()` | `matcher` | only in `Candidates`: any signed-in principal (v0.5, issue 38 M2; a slot without `Candidates` is link-only) |
 *
 * Arguments must not be optional (give a fallback with `??`).
 *
 * The built-in family (issue 39 item 3): each entry holds its signature and type rule (`type`,
 * asked by check-expr.ts and shown by the language server) beside its implementation (`evaluate`,
 * called by runtime/interpreter.ts with the arguments already evaluated, left to right). A null
 * argument where a value is required throws `RuntimeFault` (language reference "Errors").
 */
import type { Range } from "../ast.js";
import { isEmailAddress } from "../runtime/email-address.js";
import { RuntimeFault } from "../runtime/fault.js";
import type { Matcher } from "../runtime/specials.js";
import { CalendarDate, equals, type Value } from "../runtime/values.js";
import { comparable, isExactly, isOptional, showType, T, type Ty } from "../types.js";

export type BuiltinResult = { type: Ty; bad?: { index: number; message: string } };

export interface Builtin {
  name: string;
  /** How the signature reads in messages. */
  signature: string;
  arity: number;
  /** True for `role`, `user` and `anyone`, which only `Candidates` may use. */
  matcher: boolean;
  /** The result type; `bad` names the first argument that does not fit. */
  type(args: Ty[]): BuiltinResult;
  /** The value of a call with evaluated arguments `args`, at `site` (the step's time and the call's place). */
  evaluate(args: Value[], site: BuiltinSite): Value;
}

/** What a built-in's evaluation is handed besides its arguments. */
export interface BuiltinSite {
  /** The time of the current step (`now()`; one value for the whole step). */
  now: Date;
  /** The call's place in the source, for a fault's message. */
  range: Range;
}

/** `f(x)` refuses a null `x` with the fault "f() of null" (or the phrase given), then applies `fn`. */
function nonNull(phrase: string, fn: (a: Value[]) => Value) {
  return (a: Value[], site: BuiltinSite): Value => {
    if (a[0] === null) throw new RuntimeFault(phrase, site.range);
    return fn(a);
  };
}

function matcher(kind: "role" | "user") {
  return nonNull(`${kind}() of null`, (a) => ({ kind: "matcher", matcher: kind, value: String(a[0]) }) satisfies Matcher);
}

function needString(result: Ty, sig: string) {
  return (args: Ty[]): BuiltinResult =>
    args[0].kind === "error" || isExactly(args[0], "string")
      ? { type: result }
      : { type: result, bad: { index: 0, message: `${sig} needs a string, found ${showType(args[0])}` } };
}

const list: Builtin[] = [
  { name: "now", signature: "now(): datetime", arity: 0, matcher: false, type: () => ({ type: T.datetime }), evaluate: (_, site) => new Date(site.now) },
  { name: "today", signature: "today(): date", arity: 0, matcher: false, type: () => ({ type: T.date }), evaluate: (_, site) => CalendarDate.of(site.now) },
  {
    name: "len",
    signature: "len(string | list<T>): int",
    arity: 1,
    matcher: false,
    type: ([a]) => {
      if (a.kind === "error" || ((a.kind === "string" || a.kind === "list") && !isOptional(a))) return { type: T.int };
      return { type: T.int, bad: { index: 0, message: `len() needs a string or a list, found ${showType(a)}` } };
    },
    evaluate: nonNull("len() of null", (a) => (a[0] as string | Value[]).length),
  },
  { name: "lower", signature: "lower(string): string", arity: 1, matcher: false, type: needString(T.string, "lower()"), evaluate: nonNull("lower() of null", (a) => String(a[0]).toLowerCase()) },
  { name: "upper", signature: "upper(string): string", arity: 1, matcher: false, type: needString(T.string, "upper()"), evaluate: nonNull("upper() of null", (a) => String(a[0]).toUpperCase()) },
  {
    name: "contains",
    signature: "contains(list<T>, T): bool",
    arity: 2,
    matcher: false,
    type: ([xs, x]) => {
      if (xs.kind === "error") return { type: T.bool };
      if (xs.kind !== "list" || xs.optional) {
        return { type: T.bool, bad: { index: 0, message: `contains() needs a list first, found ${showType(xs)}` } };
      }
      if (!comparable(xs.element, x)) {
        return {
          type: T.bool,
          bad: { index: 1, message: `contains() on ${showType(xs)} cannot look for ${showType(x)}` },
        };
      }
      return { type: T.bool };
    },
    evaluate: nonNull("contains() on null", (a) => (a[0] as Value[]).some((e) => equals(e, a[1]))),
  },
  { name: "isEmailAddress", signature: "isEmailAddress(string): bool", arity: 1, matcher: false, type: needString(T.bool, "isEmailAddress()"), evaluate: nonNull("isEmailAddress() of null", (a) => isEmailAddress(String(a[0]))) },
  { name: "role", signature: "role(string)", arity: 1, matcher: true, type: needString(T.matcher, "role()"), evaluate: matcher("role") },
  { name: "user", signature: "user(string)", arity: 1, matcher: true, type: needString(T.matcher, "user()"), evaluate: matcher("user") },
  { name: "anyone", signature: "anyone()", arity: 0, matcher: true, type: () => ({ type: T.matcher }), evaluate: () => ({ kind: "matcher", matcher: "anyone", value: "" }) satisfies Matcher },
];

export const BUILTINS: ReadonlyMap<string, Builtin> = new Map(list.map((b) => [b.name, b]));
