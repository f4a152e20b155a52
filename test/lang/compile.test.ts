import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { Codes } from "../../src/lang/codes.js";
import { checkFiles, compile, formatDiagnostic, linksPastAuthorizeLine } from "../../src/lang/compile.js";
import type { Diagnostic } from "../../src/lang/diagnostics.js";
import { inEnter, unmark } from "./helpers.js";

// --- compile() ------------------------------------------------------------------------------------

test("the compiled form of vendor-approval indexes declarations by name", (t) => {
  const r = compile(readFileSync("examples/vendor-approval.flow", "utf8"));
  const w = r.workflow!;
  t.is(w.format, 1);
  t.is(w.name, "VendorApproval");
  t.is(w.initialState, "Review");
  t.deepEqual(w.params, [
    { name: "vendor", type: { kind: "entity", name: "Vendor", optional: false } },
    { name: "amount", type: { kind: "int", optional: false } },
  ]);
  t.deepEqual(Object.keys(w.entities.Vendor.fields), ["name", "contactEmail", "approvalUrl", "reviewNote"]);
  t.is(w.entities.Vendor.fields.approvalUrl.maxLength, 400);
  t.deepEqual(w.events.Approve.params.map((p) => p.name), ["ok", "note"]);
  t.is(w.events.Approve.authorize.length, 1);
  const review = w.states.Review;
  t.deepEqual([review.initial, review.terminal], [true, false]);
  t.deepEqual(review.slots.map((s) => [s.alias, s.event, s.params, s.candidates?.length ?? null, s.requires !== null, s.deadline !== null]), [
    ["decision", "Approve", ["ok", "note"], 1, true, true],
    ["fixEmail", "CorrectEmail", ["email"], 1, false, false],
  ]);
  t.deepEqual(Object.keys(review.on), ["fixEmail", "decision"]);
  t.deepEqual(review.on.decision.handler.arms.map((a) => [a.kind, a.target.name]), [["when", "Approved"], ["default", "Cancelled"]]);
  t.deepEqual(Object.keys(review.expired), ["decision"]);
  t.is(review.enter.length, 1);
  t.deepEqual([w.states.Approved.terminal, w.states.Approved.slots], [true, []]);
  t.deepEqual(w.maps, []);
});

test("the compiled form is plain JSON data (no classes, functions or cycles)", (t) => {
  const w = compile(readFileSync("examples/contract-signing.flow", "utf8")).workflow!;
  const seen = new Set<object>();
  const plain = (v: unknown, path: string): void => {
    if (v === null || ["string", "number", "boolean"].includes(typeof v)) return;
    if (typeof v !== "object") return t.fail(`${path} is a ${typeof v}`);
    t.false(seen.has(v) && !Array.isArray(v) && !("line" in v), `${path} is shared`);
    seen.add(v);
    const proto = Object.getPrototypeOf(v);
    t.true(Array.isArray(v) || proto === null || proto === Object.prototype, `${path} is a class instance`);
    for (const [k, x] of Object.entries(v)) plain(x, `${path}.${k}`);
  };
  plain(w, "workflow");
  t.is(JSON.parse(JSON.stringify(w)).states.Collecting.slots[0].forEach.variable, "s");
});

test("workflow is null exactly when there is an error; warnings keep it", (t) => {
  const warned = compile(inEnter("    g.CallbackUrl()", "  subscribe G() as g"));
  t.true(warned.diagnostics.every((d) => d.severity === "warning") && warned.diagnostics.length > 0);
  t.truthy(warned.workflow);
  const failed = compile(inEnter("    let x = nope"));
  t.is(failed.workflow, null);
  t.truthy(failed.ast);
});

test("ast is null on a syntax error; all problems are reported, not only the first", (t) => {
  const r = compile("workflow W\ninitial state S { enter { let = 1; let y = ) } }\nterminal state T\n");
  t.is(r.ast, null);
  t.is(r.workflow, null);
  t.true(r.diagnostics.length >= 2);
  const checked = compile(inEnter("    let a = nope1\n    let b = nope2\n    v.s = 3"));
  t.deepEqual(checked.diagnostics.filter((d) => d.severity === "error").map((d) => d.code), [Codes.UnknownName, Codes.UnknownName, Codes.TypeMismatch]);
});

test("an internal fault becomes FLOW999 instead of an exception", (t) => {
  const r = compile(null as unknown as string, "broken.flow");
  t.deepEqual(r.diagnostics.map((d) => [d.code, d.severity]), [[Codes.InternalError, "error"]]);
  t.is(r.workflow, null);
});

// --- formatDiagnostic -------------------------------------------------------------------------------

test("formatDiagnostic prints FILE:LINE:COL: severity CODE: message, the line and a caret", (t) => {
  const source = "workflow W\ninitial state S {\n  enter { let x = 1 + nope }\n}\nterminal state T\n";
  const [d] = compile(source).diagnostics;
  t.is(
    formatDiagnostic(d, source, "w.flow"),
    "w.flow:3:23: error FLOW105: unknown name 'nope'\n  enter { let x = 1 + nope }\n                      ^~~~",
  );
});

test("formatDiagnostic: warnings, tabs kept under the caret, a range past its line ends at the line", (t) => {
  const source = "a\n\tb = c\nd";
  const range = (sl: number, sc: number, so: number, el: number, ec: number, eo: number) => ({
    start: { line: sl, column: sc, offset: so },
    end: { line: el, column: ec, offset: eo },
  });
  const w: Diagnostic = { code: "FLOW111", severity: "warning", message: "m", range: range(2, 2, 3, 3, 1, 9) };
  t.is(formatDiagnostic(w, source, "f"), "f:2:2: warning FLOW111: m\n\tb = c\n\t^~~~~");
  const empty: Diagnostic = { code: "FLOW010", severity: "error", message: "m", range: range(1, 2, 1, 1, 2, 1) };
  t.is(formatDiagnostic(empty, source, "f"), "f:1:2: error FLOW010: m\na\n ^");
});

// --- checkFiles -------------------------------------------------------------------------------------------

test("checkFiles prints every diagnostic of every file and returns 1 on an error", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "flow-check-"));
  const good = join(dir, "good.flow");
  const bad = join(dir, "bad.flow");
  writeFileSync(good, "workflow W\nevent G()\ninitial state S { subscribe G() as g; on g() -> T }\nterminal state T\n");
  const { source, ranges } = unmark("workflow W\nevent G()\ninitial state S {\n  enter { let a = ⟦x⟧; let b = ⟦y⟧ }\n  on g() -> T\n  subscribe G() as g\n}\nterminal state T\n");
  writeFileSync(bad, source);
  const lines: string[] = [];
  const code = checkFiles([good, bad, join(dir, "missing.flow")], (l) => lines.push(l));
  t.is(code, 1);
  t.is(lines[0], `${bad}:${ranges[0][0]}:${ranges[0][1]}: error FLOW105: unknown name 'x'`);
  t.is(lines[1], "  enter { let a = x; let b = y }");
  t.is(lines[3], `${bad}:${ranges[1][0]}:${ranges[1][1]}: error FLOW105: unknown name 'y'`);
  t.true(lines[6].startsWith(`${join(dir, "missing.flow")}: error: cannot read the file`));
  t.is(lines[7], "3 files checked: 3 errors, 0 warnings");
});

test("checkFiles returns 0 when there are only warnings", (t) => {
  const lines: string[] = [];
  t.is(checkFiles(["examples/vendor-approval.flow"], (l) => lines.push(l)), 0);
  t.is(lines.at(-1), "1 file checked: 0 errors, 2 warnings");
});

test("a link past [Authorize] (FLOW312) is hard to miss: its warning says security, and check prints a security line above the summary (issue 38 L7)", (t) => {
  const lines: string[] = [];
  checkFiles(["examples/vendor-approval.flow"], (l) => lines.push(l));
  const warnings = lines.filter((l) => / warning FLOW312: /.test(l));
  t.is(warnings.length, 2);
  for (const w of warnings) t.regex(w, /warning FLOW312: security: event Approve has \[Authorize\], but neither it nor Candidates is checked for deposits through this link: whoever holds the link can complete 'decision'/);
  t.is(lines.at(-2), "security: 2 links bypass [Authorize] and Candidates (FLOW312): whoever holds one answers — see docs/diagnostics.md#flow312");
  t.is(linksPastAuthorizeLine(1), "security: 1 link bypasses [Authorize] and Candidates (FLOW312): whoever holds one answers — see docs/diagnostics.md#flow312");
  // none without FLOW312
  const quiet: string[] = [];
  checkFiles(["examples/expense-report.flow"], (l) => quiet.push(l));
  t.false(quiet.some((l) => l.startsWith("security:")), quiet.join("\n"));
});

// --- the table of codes ------------------------------------------------------------------------------------

test("every code is exercised by a test of test/lang and documented in docs/diagnostics.md", (t) => {
  const tests = readdirSync("test/lang")
    .filter((f) => f.endsWith(".ts"))
    .map((f) => readFileSync(join("test/lang", f), "utf8"))
    .join("\n");
  const docs = readFileSync("docs/diagnostics.md", "utf8");
  const untested = Object.keys(Codes).filter((name) => !new RegExp(`Codes\\.${name}\\b`).test(tests.replaceAll("Object.keys(Codes)", "")));
  const undocumented = Object.values(Codes).filter((code) => !docs.includes(`### ${code}`));
  t.deepEqual(untested, []);
  t.deepEqual(undocumented, []);
});

test("codes are unique and shaped FLOWnnn", (t) => {
  const values = Object.values(Codes);
  t.is(new Set(values).size, values.length);
  t.true(values.every((c) => /^FLOW\d{3}$/.test(c)));
});

test("slotflow deploy prints the same security line after a deployed workflow's FLOW312 warnings (issue 38 L7)", async (t) => {
  const { printDeployAnswer } = await import("../../src/cli/output.js");
  const source = readFileSync("examples/vendor-approval.flow", "utf8");
  const warnings = compile(source, "v.flow").diagnostics.map((d) => ({ code: d.code, severity: d.severity, message: d.message, line: d.range.start.line, column: d.range.start.column }));
  const out: string[] = [];
  const err: string[] = [];
  const code = printDeployAnswer({ status: 201, body: { name: "VendorApproval", version: 1, warnings } } as never, source, "v.flow", (l) => out.push(l), (l) => err.push(l));
  t.is(code, 0);
  t.is(err.at(-1), "security: 2 links bypass [Authorize] and Candidates (FLOW312): whoever holds one answers — see docs/diagnostics.md#flow312");
  t.is(err.filter((l) => / warning FLOW312: security: /.test(l)).length, 2);
});
