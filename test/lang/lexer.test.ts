import test from "ava";
import type { Expr, LetStmt } from "../../src/lang/ast.js";
import { Codes } from "../../src/lang/codes.js";
import { compile } from "../../src/lang/compile.js";
import { expectClean, expectDiagnostics, inEnter } from "./helpers.js";

/** The value expression of each `let` of S's enter block. */
function lets(body: string): Expr[] {
  const r = compile(inEnter(body));
  const enter = r.ast!.states[0].members.find((m) => m.kind === "enter")!;
  if (enter.kind !== "enter") throw new Error("no enter");
  return enter.body.filter((s): s is LetStmt => s.kind === "let").map((s) => s.value);
}

test("durations are an integer and one unit, valued in milliseconds", (t) => {
  const values = lets("let a = 30s\nlet b = 15m\nlet c = 2h\nlet d = 7d");
  t.deepEqual(
    values.map((e) => (e.kind === "literal" ? [e.type, e.value, e.raw] : null)),
    [
      ["duration", 30_000, "30s"],
      ["duration", 900_000, "15m"],
      ["duration", 7_200_000, "2h"],
      ["duration", 604_800_000, "7d"],
    ],
  );
});

test("integers, decimals, booleans and null", (t) => {
  const values = lets("let a = 42\nlet b = 3.5\nlet c = true\nlet d = false\nlet e = v.o ?? null");
  t.deepEqual(values.slice(0, 4).map((e) => (e.kind === "literal" ? [e.type, e.value] : null)), [
    ["int", 42],
    ["decimal", 3.5],
    ["bool", true],
    ["bool", false],
  ]);
});

test("string escapes \\\" \\\\ \\n \\t \\u{…} decode", (t) => {
  const [e] = lets(String.raw`let s = "q\" b\\ n\n t\t e\u{1F600} a\u{41}"`);
  t.is(e.kind === "literal" ? e.value : null, 'q" b\\ n\n t\t e\u{1F600} aA');
});

test("an unknown escape is FLOW004 at the escape", (t) => {
  expectDiagnostics(t, inEnter(String.raw`    let s = "a⟦\q⟧b"`), [Codes.InvalidEscape]);
});

test("a \\u{…} escape outside Unicode is FLOW004", (t) => {
  expectDiagnostics(t, inEnter(String.raw`    let s = "⟦\u{110000}⟧" + "⟦\u{D800}⟧"`), [Codes.InvalidEscape, Codes.InvalidEscape]);
});

test("a string that does not end on its line is FLOW002", (t) => {
  expectDiagnostics(
    t,
    `workflow W
initial state S { enter { let s = ⟦"abc⟧
} }
terminal state T`,
    [Codes.UnterminatedString],
  );
});

test("comments // and /* */ are skipped, also across lines", (t) => {
  expectClean(
    t,
    inEnter(`    // a line comment
    let a = 1 /* a block
    comment over lines */ + 2 // trailing
    /* before */ let b = a`),
  );
});

test("an unterminated /* comment is FLOW003 at its start", (t) => {
  expectDiagnostics(t, `workflow W\ninitial state S\nterminal state T ⟦/*⟧ never closed\n`, [Codes.UnterminatedComment]);
});

test("a character that starts no token is FLOW001", (t) => {
  expectDiagnostics(t, inEnter("    let a = 1 ⟦#⟧"), [Codes.UnexpectedCharacter]);
});

test("a number with an unknown suffix, or a fractional duration, is FLOW005", (t) => {
  expectDiagnostics(t, inEnter("    let a = ⟦15ms⟧\n    let b = ⟦1.5h⟧"), [Codes.InvalidNumber, Codes.InvalidNumber]);
});

test("an integer beyond ±(2^53−1) is FLOW006", (t) => {
  expectDiagnostics(t, inEnter("    let a = ⟦9007199254740992⟧\n    let b = 9007199254740991"), [Codes.NumberOutOfRange]);
});

test("nesting beyond the limit is FLOW007, not a crash", (t) => {
  const deep = "(".repeat(70) + "1" + ")".repeat(70);
  const r = compile(inEnter(`    let a = ${deep}`));
  t.deepEqual(r.diagnostics.map((d) => d.code), [Codes.TooDeep]);
  t.is(r.diagnostics[0].range.start.line, 8);
});

test("contextual words are identifiers elsewhere: `email` as a parameter and an address", (t) => {
  expectClean(
    t,
    `workflow W(slot: string, each: int, expired: bool, subject: string, body: string)
event CorrectEmail(email: string)
initial state S {
  subscribe CorrectEmail(email) as fix {
    Requires: email != "" && !expired
  }
  on fix(email) {
    send email to email { subject: subject, body: body + each }
    default -> T
  }
}
terminal state T`,
  );
});

test("setting names are identifiers outside settings", (t) => {
  expectClean(t, inEnter("    let Candidates = 1\n    let Requires = Candidates + 1\n    let After = 2; let Deadline = 3d; let Authorize = true"));
});

test("a reserved keyword cannot be a name (FLOW010)", (t) => {
  expectDiagnostics(t, inEnter("    let ⟦state⟧ = 1"), [Codes.ExpectedToken]);
});
