/**
 * The compiler's bounds on hostile sources (issue 8 items 15 and 17): at most MAX_DIAGNOSTICS
 * diagnostics per file plus one FLOW008 that counts the rest; a syntax error on every line of a
 * long file stops the parse instead of overflowing the stack (FLOW999 before); characters
 * PostgreSQL cannot store are FLOW009 wherever they stand. Speed is measured by bench/compile.ts.
 */
import test from "ava";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Codes } from "../../src/lang/codes.js";
import { checkFiles, compile } from "../../src/lang/compile.js";
import { MAX_DIAGNOSTICS } from "../../src/lang/diagnostics.js";
import { expectDiagnostics, inEnter } from "./helpers.js";

/** A workflow whose enter block holds `lines` copies of `line(i)`. */
function everyLine(lines: number, line: (i: number) => string): string {
  const body = Array.from({ length: lines }, (_, i) => line(i)).join("\n");
  return `workflow W(n: int)\nevent Go()\ninitial state S {\n  subscribe Go() as go\n  on go() -> Done\n  enter {\n${body}\n  }\n}\nterminal state Done\n`;
}

test("a type error on every line reports the first 100 and one FLOW008 counting the rest", (t) => {
  const r = compile(everyLine(2_000, (i) => `    let v${i} = "a" - ${i}`));
  t.is(r.diagnostics.length, MAX_DIAGNOSTICS + 1);
  t.true(r.diagnostics.slice(0, MAX_DIAGNOSTICS).every((d) => d.code === Codes.OperatorTypes));
  const last = r.diagnostics.at(-1)!;
  t.is(last.code, Codes.TooManyDiagnostics);
  t.is(last.severity, "error");
  t.regex(last.message, /^1900 more errors not shown/);
  // It points at the first diagnostic left out: the line after the 100th reported one.
  t.is(last.range.start.line, r.diagnostics[MAX_DIAGNOSTICS - 1].range.start.line + 1);
  t.is(r.workflow, null);
});

test("a file at the cap exactly gets no FLOW008", (t) => {
  const r = compile(everyLine(MAX_DIAGNOSTICS, (i) => `    let v${i} = "a" - ${i}`));
  t.is(r.diagnostics.length, MAX_DIAGNOSTICS);
  t.false(r.diagnostics.some((d) => d.code === Codes.TooManyDiagnostics));
});

for (const [name, line] of [
  ["a stray closing brace", (i: number) => `    x${i} }`],
  ["a malformed let", (i: number) => `    let = = ${i} )`],
] as const) {
  test(`${name} on each of 5,000 lines stops the parse with FLOW008, not an internal error`, (t) => {
    const r = compile(everyLine(5_000, line));
    const codes = r.diagnostics.map((d) => d.code);
    t.false(codes.includes(Codes.InternalError), r.diagnostics.find((d) => d.code === Codes.InternalError)?.message);
    t.true(r.diagnostics.length <= MAX_DIAGNOSTICS + 1);
    t.is(codes.at(-1), Codes.TooManyDiagnostics);
    t.is(r.workflow, null);
  });
}

test("U+0000 and lone surrogates are FLOW009 in a string, a comment or between tokens", (t) => {
  expectDiagnostics(
    t,
    inEnter('    let a = "x⟦\u0000⟧y"\n    // note ⟦\ud800⟧ here\n    let b = 1 ⟦\u0000⟧\n    let c = "⟦\udc00⟧"'),
    [Codes.UnstorableCharacter, Codes.UnstorableCharacter, Codes.UnstorableCharacter, Codes.UnstorableCharacter],
  );
});

test("a well-formed surrogate pair (an emoji) is fine", (t) => {
  const r = compile(inEnter('    let a = "😀"'));
  t.false(r.diagnostics.some((d) => d.code === Codes.UnstorableCharacter));
});

test("the escape \\u{0} is FLOW004: a literal can never make a string PostgreSQL cannot store", (t) => {
  expectDiagnostics(t, inEnter('    let a = "x⟦\\u{0}⟧y"\n    let b = "\\u{1F600}"'), [Codes.InvalidEscape]);
});

test("slotflow check counts every error of a capped file in its summary, not only those shown", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "flow-cap-"));
  const path = join(dir, "big.flow");
  writeFileSync(path, everyLine(250, (i) => `    let v${i} = "a" - ${i}`));
  const lines: string[] = [];
  t.is(checkFiles([path], (l) => lines.push(l)), 1);
  t.is(lines.at(-1), "1 file checked: 250 errors, 0 warnings");
  t.is(lines.filter((l) => l.startsWith(`${path}:`)).length, MAX_DIAGNOSTICS + 1);
});
