/**
 * The one check of an event's body (engine/values/body.ts `checkBody`) with constraints (v0.5,
 * issue 43 item 1): each rule refuses naming the parameter and the rule, `expects` lists each
 * parameter's type and constraints, a `null` keeps every rule, a type problem is reported alone,
 * and `@pattern` runs in linear time on hostile input (RE2: a pattern that would backtrack
 * catastrophically in a JavaScript RegExp finishes).
 */
import test from "ava";
import { compile } from "../../src/lang/compile.js";
import { checkBody } from "../../src/engine/values/body.js";

const SOURCE = `workflow W
event Onboard(
  name: string @minLength(1) @maxLength(20),
  incorporated: date @max(today),
  founded: date? @min("1900-01-01"),
  revenue: decimal @min(0),
  staff: int? @min(1) @max(1000),
  code: string @pattern("(a+)+b"),
  contact: string @email,
  size: string @oneOf("small", "large"),
)
initial state S {
  subscribe Onboard(name, incorporated, founded, revenue, staff, code, contact, size) as o
  on o(name, incorporated, founded, revenue, staff, code, contact, size) -> T
}
terminal state T
`;
const params = compile(SOURCE, "w.flow").workflow!.events.Onboard.params;
const NOW = new Date("2026-11-28T12:00:00Z");
const GOOD = { name: "Acme", incorporated: "2020-01-01", founded: null, revenue: 0, staff: null, code: "aab", contact: "cfo@example.com", size: "small" };

test("a body that keeps every rule is accepted; null keeps the rules of an optional parameter", (t) => {
  const r = checkBody(GOOD, params, { now: NOW });
  t.true(r.ok);
  t.true(checkBody({ ...GOOD, incorporated: "2026-11-28", staff: 1000, founded: "1900-01-01" }, params, { now: NOW }).ok, "bounds are inclusive; today is allowed by @max(today)");
});

test("each broken rule is a problem naming the parameter and the rule; expects lists type and constraints", (t) => {
  const r = checkBody(
    { name: "", incorporated: "2099-01-01", founded: "1899-12-31", revenue: -5, staff: 0, code: "ab!", contact: "a@b.c, d@e.f", size: "medium" },
    params,
    { now: NOW },
  );
  if (r.ok) return t.fail();
  t.deepEqual(r.problems, [
    { name: "name", problem: "must not be empty", rule: "@minLength(1)" },
    { name: "incorporated", problem: "must not be in the future (after 2026-11-28)", rule: "@max(today)" },
    { name: "founded", problem: "must be on or after 1900-01-01", rule: '@min("1900-01-01")' },
    { name: "revenue", problem: "must be at least 0", rule: "@min(0)" },
    { name: "staff", problem: "must be at least 1", rule: "@min(1)" },
    { name: "code", problem: 'must match the pattern "(a+)+b"', rule: '@pattern("(a+)+b")' },
    { name: "contact", problem: "must be one email address, such as name@example.com", rule: "@email" },
    { name: "size", problem: 'must be one of "small", "large"', rule: '@oneOf("small", "large")' },
  ]);
  t.deepEqual(r.expects, {
    name: "string @minLength(1) @maxLength(20)",
    incorporated: "string (date, YYYY-MM-DD) @max(today)",
    founded: 'string (date, YYYY-MM-DD) or null @min("1900-01-01")',
    revenue: "number @min(0)",
    staff: "integer or null @min(1) @max(1000)",
    code: 'string @pattern("(a+)+b")',
    contact: "string @email",
    size: 'string @oneOf("small", "large")',
  });
  t.regex(r.detail, /"revenue" must be at least 0 \(@min\(0\)\)/);
});

test("a value of the wrong type gets its type problem alone, not its rules'", (t) => {
  const r = checkBody({ ...GOOD, revenue: "-5" }, params, { now: NOW });
  if (r.ok) return t.fail();
  t.deepEqual(r.problems.map((p) => [p.name, p.rule]), [["revenue", undefined]]);
});

test("rules: false checks names and types only (a link held to its minting version's rules)", (t) => {
  t.true(checkBody({ ...GOOD, revenue: -5 }, params, { now: NOW, rules: false }).ok);
});

test("@pattern on a long hostile input finishes (RE2, linear time) and refuses it", (t) => {
  // "(a+)+b" against "aaaa…a!" takes exponential time in a backtracking engine.
  const hostile = "a".repeat(100_000) + "!";
  const r = checkBody({ ...GOOD, name: "x", code: hostile }, params, { now: NOW });
  if (r.ok) return t.fail();
  t.deepEqual(r.problems.map((p) => p.rule), ['@pattern("(a+)+b")']);
});

test("maxLength counts UTF-16 code units", (t) => {
  const r = checkBody({ ...GOOD, name: "x".repeat(21) }, params, { now: NOW });
  if (r.ok) return t.fail();
  t.deepEqual(r.problems, [{ name: "name", problem: "must be at most 20 characters long", rule: "@maxLength(20)" }]);
});
