/**
 * Issue 19 item 5: one bad token never hides the file's other errors, and `slotflow check --json`
 * prints the diagnostics as JSON for CI and editors.
 */
import test from "ava";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Codes } from "../../src/lang/codes.js";
import { expectDiagnostics, inEnter, inState } from "./helpers.js";
import { cliEntry } from "../helpers/cli-entry.js";
import { ROOT } from "../helpers/root.js";

const run = promisify(execFile);

test("a bad duration and three type errors: all four are reported", (t) => {
  expectDiagnostics(
    t,
    inState(`  subscribe E(a, b) as e { Deadline: ⟦1.5h⟧ }
  enter {
    let x = 1 + ⟦"a" * 2⟧
    v.s = ⟦3⟧
    if (⟦n⟧) { v.i = 1 }
  }
  on e(a, b) -> T`),
    [Codes.InvalidNumber, Codes.OperatorTypes, Codes.TypeMismatch, Codes.ConditionNotBool],
  );
});

test("a bad number causes no second diagnostic where it is used", (t) => {
  expectDiagnostics(t, inEnter("    let d = ⟦2x⟧\n    v.i = d + 1\n    v.s = ⟦true⟧"), [Codes.InvalidNumber, Codes.TypeMismatch]);
  expectDiagnostics(t, inState("  subscribe G() as g { Deadline: ⟦99999999999999999d⟧ }\n  on g() -> T\n  enter { let y = ⟦nope⟧ }"), [
    Codes.NumberOutOfRange,
    Codes.UnknownName,
  ]);
});

test("a bad escape and a stray character keep the rest checked", (t) => {
  expectDiagnostics(t, inEnter(String.raw`    v.s = "a⟦\q⟧"` + "\n    let z = ⟦nope⟧"), [Codes.InvalidEscape, Codes.UnknownName]);
  expectDiagnostics(t, inEnter("    let a = 1 ⟦$⟧\n    v.s = ⟦a⟧"), [Codes.UnexpectedCharacter, Codes.TypeMismatch]);
});

test("a syntax error still stops before checking (the tree is incomplete)", (t) => {
  expectDiagnostics(t, inEnter("    let ⟦=⟧ 1\n    v.s = 3"), [Codes.ExpectedToken]);
});

test("slotflow check --json prints code, severity, message, file, line, column and end, and exits 1 on errors", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "slotflow-check-json-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "bad.flow");
  writeFileSync(file, "workflow W\ninitial state S {\n  subscribe X() as x { Deadline: 1.5h }\n  enter { let y = nope }\n  on x() -> T\n}\nterminal state T\n");
  const missing = join(dir, "missing.flow");
  const r = await run(process.execPath, [...cliEntry(), "check", "--json", file, missing], { cwd: ROOT }).then(
    (ok) => ({ code: 0, stdout: ok.stdout }),
    (err: { code: number; stdout: string }) => ({ code: err.code, stdout: err.stdout }),
  );
  t.is(r.code, 1);
  const doc = JSON.parse(r.stdout) as { diagnostics: Record<string, unknown>[]; files: number; errors: number; warnings: number };
  t.like(doc, { files: 2, errors: 4, warnings: 0 });
  t.deepEqual(
    doc.diagnostics.map((d) => [d.code, d.severity, d.file, d.line, d.column, d.end]),
    [
      [Codes.UnknownEvent, "error", file, 3, 13, { line: 3, column: 14 }],
      [Codes.InvalidNumber, "error", file, 3, 34, { line: 3, column: 38 }],
      [Codes.UnknownName, "error", file, 4, 19, { line: 4, column: 23 }],
      [null, "error", missing, 1, 1, { line: 1, column: 1 }],
    ],
  );
  t.true(doc.diagnostics.every((d) => typeof d.message === "string" && (d.message as string).length > 0));
  t.deepEqual(Object.keys(doc.diagnostics[0]), ["code", "severity", "message", "file", "line", "column", "end"]);
});
