import test from "ava";
import type { BinaryExpr, Expr } from "../../src/lang/ast.js";
import { Codes } from "../../src/lang/codes.js";
import { expectClean, expectDiagnostics, inEnter, inState } from "./helpers.js";

/** The checked value of the first `let` in S's enter block (the source must compile). */
function letValue(t: Parameters<typeof expectClean>[0], body: string): Expr {
  const r = expectClean(t, inEnter(body));
  const enter = r.ast!.states[0].members.find((m) => m.kind === "enter");
  if (enter?.kind !== "enter" || enter.body[0].kind !== "let") throw new Error("no let");
  return enter.body[0].value;
}

// --- operators accepted -------------------------------------------------------------------------

test("+ concatenates when either side is a string, converting any scalar (optional too)", (t) => {
  expectClean(t, inEnter('    let a = "n=" + n + ", r=" + r + ", at " + at + " " + 7d + true + v.o + v.d + null\n    let b = n + "!"\n    v.s = v.o + v.o'));
});

test("int and decimal arithmetic; int op int is int, otherwise decimal (annotated)", (t) => {
  const e = letValue(t, "    let x = n / 2 + r") as BinaryExpr;
  t.is(e.numeric, "decimal");
  t.deepEqual(e.operandTypes, { left: "int", right: "decimal" });
  const left = e.left as BinaryExpr;
  t.is(left.numeric, "int");
  t.deepEqual(left.operandTypes, { left: "int", right: "int" });
});

test("concatenation is annotated by operand types, not numeric", (t) => {
  const e = letValue(t, '    let x = "a" + n') as BinaryExpr;
  t.is(e.numeric, undefined);
  t.deepEqual(e.operandTypes, { left: "string", right: "int" });
});

test("datetime ± duration, datetime − datetime, duration ± duration; comparisons of each", (t) => {
  expectClean(
    t,
    inEnter(`    let later = at + 2h
    let earlier = 15m + at - 1d
    let gap = later - earlier
    let total = gap + 30s - 1m
    let ok = later > earlier && gap >= 1h && "a" < "b" && n <= r && total != 0s && at == now()`),
  );
  const e = letValue(t, "    let g = at - at") as BinaryExpr;
  t.deepEqual(e.operandTypes, { left: "datetime", right: "datetime" });
});

test("== and != compare values of one scalar type, optional or not, and optional values with null", (t) => {
  expectClean(t, inEnter('    let a = v.o == "x" && v.o != null && n == r && v.d == n && true != false && at != now()'));
});

test("?? gives the left value or the right one", (t) => {
  expectClean(t, inEnter('    let a = (v.o ?? "none") + ""\n    let b = (v.d ?? n) * 2\n    v.s = v.o ?? v.o ?? "x"'));
});

test("lists: one element type, int widening to decimal, null making elements optional", (t) => {
  expectClean(t, inEnter('    let a = [1, 2.5]\n    let b = ["x", null]\n    let c = []\n    let d = len(a) + len(b) + len(c)'));
});

// --- operators refused ----------------------------------------------------------------------------

test("arithmetic on strings, bools or optional numbers is FLOW201", (t) => {
  expectDiagnostics(
    t,
    inEnter(`    let a = ⟦"x" - 1⟧
    let b = ⟦true * 2⟧
    let c = ⟦v.d + 1⟧
    let d = ⟦at + at⟧
    let e = ⟦names + 1⟧`),
    [Codes.OperatorTypes, Codes.OperatorTypes, Codes.OperatorTypes, Codes.OperatorTypes, Codes.OperatorTypes],
  );
});

test("ordering needs two numbers, strings, datetimes or durations, not optional (FLOW201)", (t) => {
  expectDiagnostics(
    t,
    inEnter(`    let a = ⟦"a" < 1⟧
    let b = ⟦true < false⟧
    let c = ⟦v.o > "a"⟧
    let d = ⟦at < 1d⟧`),
    [Codes.OperatorTypes, Codes.OperatorTypes, Codes.OperatorTypes, Codes.OperatorTypes],
  );
});

test("== needs comparable types; null only against an optional (FLOW201)", (t) => {
  expectDiagnostics(
    t,
    inEnter(`    let a = ⟦n == "1"⟧
    let b = ⟦n == null⟧
    let c = ⟦names == names⟧
    let d = ⟦v == v⟧`),
    [Codes.OperatorTypes, Codes.OperatorTypes, Codes.OperatorTypes, Codes.OperatorTypes],
  );
});

test("&&, || and ! need bool (FLOW201)", (t) => {
  expectDiagnostics(t, inEnter("    let a = ⟦n && true⟧\n    let b = ⟦!n⟧\n    let c = ⟦-true⟧"), [Codes.OperatorTypes, Codes.OperatorTypes, Codes.OperatorTypes]);
});

test("string + a list or an entity is FLOW201", (t) => {
  expectDiagnostics(t, inEnter('    let a = ⟦"x" + names⟧\n    let b = ⟦v + "x"⟧'), [Codes.OperatorTypes, Codes.OperatorTypes]);
});

test("a wrong operand is reported once, not again by the operators around it", (t) => {
  expectDiagnostics(t, inEnter("    let a = (⟦nope⟧ + 1) * 2 - n"), [Codes.UnknownName]);
});

test("?? on a value that is never null is FLOW203", (t) => {
  expectDiagnostics(t, inEnter('    let a = ⟦n ?? 1⟧\n    let b = ⟦v.s ?? "x"⟧'), [Codes.CoalesceNotOptional, Codes.CoalesceNotOptional]);
});

test("?? with a fallback of another type is FLOW201", (t) => {
  expectDiagnostics(t, inEnter('    let a = ⟦v.o ?? 1⟧'), [Codes.OperatorTypes]);
});

// --- conditions ------------------------------------------------------------------------------------

test("conditions of if, when, milestone, Requires and Authorize are bool (FLOW202)", (t) => {
  expectDiagnostics(
    t,
    inState(
      `  subscribe E(a, b) as e {
    Requires: ⟦a⟧
  }
  enter {
    if (⟦n⟧) { }
  }
  on e(a, b) {
    when (⟦b⟧) -> T
  }
  milestone M when (⟦v.o⟧) { }`,
      '[Authorize(p => ⟦p.email⟧)]\nevent H()',
    ),
    [Codes.ConditionNotBool, Codes.ConditionNotBool, Codes.ConditionNotBool, Codes.ConditionNotBool, Codes.ConditionNotBool],
  );
});

test("an optional bool is not a condition until given a fallback (FLOW202)", (t) => {
  expectDiagnostics(t, "workflow W(f: bool?)\ninitial state S { enter { if (⟦f⟧) { }; if (f ?? false) { } } }\nterminal state T\n", [Codes.ConditionNotBool]);
});

// --- assignments and values ---------------------------------------------------------------------------------

test("assigning a value of the wrong type is FLOW200 at the value", (t) => {
  expectDiagnostics(
    t,
    inEnter(`    v.s = ⟦1⟧
    v.i = ⟦r⟧
    v.s = ⟦v.o⟧
    v.s = ⟦null⟧
    let x = 1
    x = ⟦"one"⟧`),
    [Codes.TypeMismatch, Codes.TypeMismatch, Codes.TypeMismatch, Codes.TypeMismatch, Codes.TypeMismatch],
  );
});

test("optional fields accept null and non-optional values; decimal fields accept int", (t) => {
  expectClean(t, inEnter('    v.o = null\n    v.o = "x"\n    v.d = n\n    v.d = null\n    let x = r\n    x = n'));
});

test("email address, subject and body are strings, optional allowed (FLOW200)", (t) => {
  expectDiagnostics(
    t,
    inEnter(`    send email to ⟦n⟧ { subject: ⟦true⟧, body: ⟦names⟧ }
    send email to v.o { subject: v.s, body: v.o }`),
    [Codes.TypeMismatch, Codes.TypeMismatch, Codes.TypeMismatch],
  );
});

test("built-in arguments are checked (FLOW200) and counted (FLOW206)", (t) => {
  expectDiagnostics(
    t,
    inEnter(`    let a = len(⟦n⟧)
    let b = lower(⟦v.o⟧)
    let c = contains(names, ⟦1⟧)
    let d = ⟦now(1)⟧
    let e = ⟦upper()⟧
    let f = contains(⟦v.s⟧, "x")`),
    [Codes.TypeMismatch, Codes.TypeMismatch, Codes.TypeMismatch, Codes.ArgumentCount, Codes.ArgumentCount, Codes.TypeMismatch],
  );
});

test("built-ins: now, len, lower, upper, contains", (t) => {
  expectClean(t, inEnter('    let a = now() + 1d\n    let b = len("abc") + len(names)\n    let c = lower(v.s) + upper("x")\n    let d = contains(names, v.s) || contains([1, 2], 2)'));
});

test("list elements of unrelated types are FLOW200", (t) => {
  expectDiagnostics(t, inEnter('    let a = [1, ⟦"a"⟧, ⟦true⟧]'), [Codes.TypeMismatch, Codes.TypeMismatch]);
});

test("let of a bare null cannot be typed (FLOW207)", (t) => {
  expectDiagnostics(t, inEnter("    let a = ⟦null⟧"), [Codes.CannotInferType]);
});

test("for each needs a list (FLOW204)", (t) => {
  expectDiagnostics(t, inState("  subscribe G() as g for each x in ⟦n⟧\n  on g() -> T"), [Codes.NotAList]);
});

test("Deadline is a duration or a datetime (FLOW205)", (t) => {
  expectDiagnostics(t, inState('  subscribe G() as g { Deadline: ⟦"7d"⟧ }\n  subscribe G() as h { Deadline: at }\n  subscribe G() as i { Deadline: 2h + 30m }'), [Codes.DeadlineType]);
});

test("isEmailAddress(string) is a bool; an optional, a non-string or a second argument is refused", (t) => {
  expectClean(t, inEnter('    let ok = isEmailAddress(v.s) && !isEmailAddress("a@b.test")\n    if (isEmailAddress(v.o ?? "")) { v.i = 1 }'));
  expectDiagnostics(
    t,
    inEnter(`    let a = isEmailAddress(⟦v.o⟧)
    let b = isEmailAddress(⟦n⟧)
    let c = ⟦isEmailAddress("a@b.test", "c@d.test")⟧
    let d = ⟦isEmailAddress("a@b.test") + 1⟧`),
    [Codes.TypeMismatch, Codes.TypeMismatch, Codes.ArgumentCount, Codes.OperatorTypes],
  );
});
