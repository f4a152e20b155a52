/**
 * Constraints on event parameters in the language (v0.5, issue 43 item 1; docs/language.md
 * "Constraints on event parameters"): what parses, what each misuse reports (FLOW130 a rule on the
 * wrong type, FLOW131 a bad argument, FLOW132 a pattern RE2 cannot run), what reaches the compiled
 * form, and that the formatter keeps them. Diagnostics are asserted by code and range only.
 */
import test from "ava";
import { format } from "../../src/authoring/format.js";
import { Codes } from "../../src/lang/codes.js";
import { expectClean, expectDiagnostics } from "./helpers.js";

const RULED = `workflow W
event Onboard(
  name: string @label("Company name") @minLength(1) @maxLength(200),
  incorporated: date @max(today) @min("1800-01-01"),
  revenue: decimal @min(0),
  staff: int? @min(1) @max(1000000),
  code: string @pattern("[A-Z]{2}[0-9]{6}"),
  contact: string @email,
  size: string @oneOf("small", "medium", "large",),
)
initial state S {
  subscribe Onboard(name, incorporated, revenue, staff, code, contact, size) as o
  on o(name, incorporated, revenue, staff, code, contact, size) -> T
}
terminal state T
`;

test("constraints compile into the parameters' rules, beside their page wording", (t) => {
  const r = expectClean(t, RULED);
  const params = Object.fromEntries(r.workflow!.events.Onboard.params.map((p) => [p.name, p]));
  t.deepEqual(params.name!.rules, { minLength: 1, maxLength: 200 });
  t.deepEqual(params.name!.page, { label: "Company name" });
  t.deepEqual(params.incorporated!.rules, { max: "today", min: "1800-01-01" });
  t.deepEqual(params.revenue!.rules, { min: 0 });
  t.deepEqual(params.staff!.rules, { min: 1, max: 1000000 });
  t.deepEqual(params.code!.rules, { pattern: "[A-Z]{2}[0-9]{6}" });
  t.deepEqual(params.contact!.rules, { email: true });
  t.deepEqual(params.size!.rules, { oneOf: ["small", "medium", "large"] });
});

test("a parameter without constraints has no rules key", (t) => {
  const r = expectClean(t, "workflow W\nevent E(a: string @label(\"A\"))\ninitial state S {\n  subscribe E(a) as e\n  on e(a) -> T\n}\nterminal state T\n");
  t.false("rules" in r.workflow!.events.E.params[0]!);
});

test("a rule on a type it does not apply to is FLOW130", (t) => {
  expectDiagnostics(
    t,
    `workflow W
event E(
  a: string ⟦@min(1)⟧,
  b: int ⟦@minLength(1)⟧,
  c: bool ⟦@email⟧,
  d: list<string> ⟦@oneOf("x")⟧,
  e: datetime ⟦@max(today)⟧,
  f: decimal ⟦@pattern("x")⟧
)
initial state S
terminal state T`,
    Array(6).fill(Codes.ConstraintNotForType),
  );
});

test("a bad argument, a rule twice, or a minimum above its maximum is FLOW131", (t) => {
  expectDiagnostics(
    t,
    `workflow W
event E(
  a: int @min(⟦1.5⟧),
  b: decimal @max(⟦"3"⟧),
  c: date @max(⟦tomorrow⟧),
  d: date @min(⟦"2026-02-30"⟧),
  e: string @minLength(⟦-1⟧),
  f: string @email(⟦"x"⟧),
  g: string @oneOf("x", ⟦"x"⟧),
  h: string @oneOf(⟦""⟧),
  i: string ⟦@oneOf⟧,
  j: string @pattern(⟦""⟧),
  k: int @min(1) ⟦@min(2)⟧,
  ⟦l: int @min(5) @max(4)⟧,
  ⟦m: string @minLength(3) @maxLength(2)⟧,
  ⟦n: date @min("2026-01-02") @max("2026-01-01")⟧,
  o: int @max(1, ⟦2⟧)
)
initial state S
terminal state T`,
    Array(15).fill(Codes.InvalidConstraint),
  );
});

test("a pattern RE2 cannot compile (a backreference, a look-ahead) is FLOW132", (t) => {
  expectDiagnostics(
    t,
    `workflow W
event E(a: string @pattern(⟦"(a)\\\\1"⟧), b: string @pattern(⟦"(?=x)x"⟧))
initial state S
terminal state T`,
    [Codes.PatternNotRe2, Codes.PatternNotRe2],
  );
});

test("negative bounds and dates are accepted; @min(today) on a date, too", (t) => {
  const r = expectClean(t, "workflow W\nevent E(t: int @min(-40) @max(60), d: date? @min(today))\ninitial state S {\n  subscribe E(t, d) as e\n  on e(t, d) -> T\n}\nterminal state T\n");
  t.deepEqual(r.workflow!.events.E.params[0]!.rules, { min: -40, max: 60 });
  t.deepEqual(r.workflow!.events.E.params[1]!.rules, { min: "today" });
});

test("the formatter keeps constraints as written, in its canonical spacing", (t) => {
  const messy = RULED.replace('@oneOf("small", "medium", "large",)', '@oneOf( "small" ,"medium","large", )').replace("@max(today)", "@max( today )");
  const r = format(messy);
  t.true(r.ok);
  if (r.ok) t.is(r.text, RULED.replace('"large",)', '"large",)'));
});
