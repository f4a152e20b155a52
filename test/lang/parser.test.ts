import { readFileSync } from "node:fs";
import test from "ava";
import type { BinaryExpr, Expr, FlowFile, Statement } from "../../src/lang/ast.js";
import { Codes } from "../../src/lang/codes.js";
import { compile } from "../../src/lang/compile.js";
import { parse } from "../../src/lang/parser.js";
import { expectClean, expectDiagnostics, inEnter, inState, unmark } from "./helpers.js";

function enterBody(source: string): Statement[] {
  const r = compile(source);
  const enter = r.ast!.states[0].members.find((m) => m.kind === "enter");
  if (enter?.kind !== "enter") throw new Error("no enter block");
  return enter.body;
}

/** Renders an expression with explicit parentheses. */
function show(e: Expr): string {
  switch (e.kind) {
    case "binary":
      return `(${show(e.left)} ${e.op} ${show(e.right)})`;
    case "unary":
      return `(${e.op}${show(e.operand)})`;
    case "name":
      return e.name;
    case "literal":
      return e.raw;
    case "member":
      return `${show(e.object)}.${e.property.name}`;
    case "call":
      return `${show(e.callee)}(${e.args.map(show).join(", ")})`;
    case "list":
      return `[${e.elements.map(show).join(", ")}]`;
  }
}

function firstLet(body: string): Expr {
  const s = enterBody(inEnter(body))[0];
  if (s.kind !== "let") throw new Error("not a let");
  return s.value;
}

// --- the two examples ---------------------------------------------------------------------------

test("examples/vendor-approval.flow parses and compiles (two Authorize warnings)", (t) => {
  const source = readFileSync("examples/vendor-approval.flow", "utf8");
  const r = compile(source, "examples/vendor-approval.flow");
  t.deepEqual(
    r.diagnostics.map((d) => [d.code, d.severity, d.range.start.line, d.range.start.column]),
    [
      [Codes.CallbackUrlAuthorize, "warning", 36, 26],
      [Codes.CallbackUrlAuthorize, "warning", 46, 26],
    ],
  );
  const file = r.ast as FlowFile;
  t.is(file.name.name, "VendorApproval");
  t.deepEqual(file.params.map((p) => p.name.name), ["vendor", "amount"]);
  t.deepEqual(file.events.map((e) => [e.name.name, e.authorize.length]), [["Approve", 1], ["CorrectEmail", 0]]);
  t.deepEqual(file.states.map((s) => [s.name.name, s.modifier]), [
    ["Review", "initial"],
    ["Approved", "terminal"],
    ["Cancelled", "terminal"],
  ]);
  t.deepEqual(file.states[0].members.map((m) => m.kind), ["subscribe", "subscribe", "enter", "on", "on", "onExpired"]);
  t.truthy(r.workflow);
});

test("examples/contract-signing.flow parses and compiles without diagnostics", (t) => {
  const r = expectClean(t, readFileSync("examples/contract-signing.flow", "utf8"));
  t.deepEqual(r.diagnostics, []);
  const collecting = r.workflow!.states.Collecting;
  t.deepEqual(collecting.slots.map((s) => [s.alias, s.forEach?.variable ?? null, s.after]), [
    ["signatures", "s", []],
    ["counter", null, ["signatures"]],
    ["withdraw", null, []],
  ]);
  t.deepEqual(collecting.milestones.map((m) => m.name), ["AllSigned"]);
});

// --- ranges ------------------------------------------------------------------------------------

test("nodes carry 1-based line/column and 0-based offsets, end exclusive", (t) => {
  const { source } = unmark("workflow W\ninitial state S {\n  enter { let x = 1 + 2 }\n}\nterminal state T\n");
  const file = parse(source).ast!;
  const s = file.states[0];
  t.deepEqual(s.range.start, { line: 2, column: 1, offset: 11 });
  t.deepEqual(s.range.end, { line: 4, column: 2, offset: 56 });
  const enter = s.members[0];
  if (enter.kind !== "enter" || enter.body[0].kind !== "let") return t.fail();
  const value = enter.body[0].value as BinaryExpr;
  t.deepEqual([value.range.start.line, value.range.start.column, value.range.end.column], [3, 19, 24]);
  t.is(source.slice(value.range.start.offset, value.range.end.offset), "1 + 2");
  t.deepEqual(enter.body[0].name.range.start, { line: 3, column: 15, offset: 43 });
});

test("CRLF line ends count as one line break", (t) => {
  const file = parse("workflow W\r\ninitial state S\r\nterminal state T\r\n").ast!;
  t.deepEqual(file.states[1].range.start, { line: 3, column: 1, offset: 29 });
});

// --- precedence ------------------------------------------------------------------------------------

test("operator precedence, loosest first: ?? || && == < + * unary postfix", (t) => {
  t.is(show(firstLet("    let x = a ?? b || c && d == e < f + g * -h.i(j)")), "(a ?? (b || (c && (d == (e < (f + (g * (-h.i(j)))))))))");
});

test("binary operators are left-associative", (t) => {
  t.is(show(firstLet("    let x = a - b - c / d / e")), "((a - b) - ((c / d) / e))");
});

test("parentheses, lists and calls", (t) => {
  t.is(show(firstLet("    let x = (a + b) * len([1, 2,])")), "((a + b) * len([1, 2]))");
});

// --- statements and members ------------------------------------------------------------------------

test("an arrow handler is a handler of one default arm", (t) => {
  const r = compile(inState("  subscribe G() as g\n  on g() -> T"));
  const on = r.workflow!.states.S.on.g;
  t.deepEqual(on.handler.statements, []);
  t.deepEqual(on.handler.arms.map((a) => [a.kind, a.condition, a.body, a.target.name]), [["default", null, null, "T"]]);
});

test("else if nests an if statement in the else branch", (t) => {
  const [s] = enterBody(inEnter("    if (n > 1) { } else if (n > 0) { } else { let z = 1 }"));
  if (s.kind !== "if") return t.fail();
  t.is(s.else?.length, 1);
  const inner = s.else![0];
  t.is(inner.kind, "if");
  if (inner.kind === "if") t.is(inner.else?.[0].kind, "let");
});

test("a dotted path before = is an assignment", (t) => {
  const [s] = enterBody(inEnter('    v.s = "x"'));
  t.is(s.kind, "assign");
  if (s.kind === "assign") t.deepEqual(s.target.map((i) => i.name), ["v", "s"]);
});

// --- newlines -------------------------------------------------------------------------------------------

test("a statement ends at the end of its line: the next line is a new statement", (t) => {
  expectDiagnostics(t, inEnter("    let x = n\n    ⟦-1⟧"), [Codes.ExpressionNotCall]);
});

test("an expression continues after a binary operator at the end of a line", (t) => {
  t.is(show(firstLet("    let x = n +\n      1 *\n      2 ==\n      3")), "((n + (1 * 2)) == 3)");
});

test("an expression continues inside ( ) and [ ] across lines", (t) => {
  t.is(show(firstLet("    let x = (n\n      + 1)")), "(n + 1)");
  t.is(show(firstLet("    let x = [1,\n      2\n      ]")), "[1, 2]");
  t.is(show(firstLet("    let x = len(\n      names\n    )")), "len(names)");
});

test("; separates statements on one line", (t) => {
  t.deepEqual(enterBody(inEnter("    let a = 1; let b = 2;; let c = 3;")).map((s) => s.kind), ["let", "let", "let"]);
});

test("two statements on one line without ; is FLOW010 at the second", (t) => {
  expectDiagnostics(t, inEnter("    let a = 1 ⟦let⟧ b = 2"), [Codes.ExpectedToken]);
});

test("else, -> and { may start the next line; } may close on its own line", (t) => {
  expectClean(
    t,
    inState(`  subscribe E(a, b) as e
  {
    Deadline: 1d
  }
  enter
  {
    if (n > 0)
    {
      let x = 1
    }
    else
    {
      let y = 2
    }
  }
  on e(a, b)
  {
    when (a > 0)
      -> T
    default
    {
      v.s = b
    }
    -> T
  }
  on e.expired
    -> T`),
  );
});

test("a newline after the > of list<…> ends the item", (t) => {
  expectClean(t, "workflow W(a: list<string>\n, b: int)\nentity X {\n  l: list<list<int>>\n  n: int\n}\ninitial state S\nterminal state T\n");
});

test("a line may not start with .member (no continuation before a dot)", (t) => {
  expectDiagnostics(t, inEnter("    let x = v\n      ⟦.⟧s"), [Codes.ExpectedToken]);
});

test("comments and blank lines between items are fine", (t) => {
  expectClean(t, "// header\n\nworkflow W // trailing\n\n/* between */\n\ninitial state S\n\n\nterminal state T\n// end");
});

// --- syntax errors ------------------------------------------------------------------------------------

test("syntax errors are reported several at a time, one per item", (t) => {
  expectDiagnostics(
    t,
    `workflow W
initial state S {
  enter {
    let x = ⟦)⟧
    let y = 2
    let ⟦=⟧ 3
  }
  on x(a ⟦->⟧ T
}
terminal state T`,
    [Codes.UnexpectedToken, Codes.ExpectedToken, Codes.ExpectedToken],
  );
});

test("a file must start with the workflow header (FLOW010)", (t) => {
  expectDiagnostics(t, "⟦⟧entity E { }\n", [Codes.ExpectedToken]);
});

test("a stray token at the top level is FLOW011", (t) => {
  expectDiagnostics(t, "workflow W\ninitial state S\nterminal state T\n⟦}⟧\n", [Codes.UnexpectedToken]);
});

test("the contextual words are checked where the grammar needs them (FLOW020)", (t) => {
  expectDiagnostics(
    t,
    `workflow W(names: list<string>)
[⟦Authorise⟧(p => true)]
event G()
initial state S {
  subscribe G() as g for ⟦every⟧ x in names
  subscribe G() as h
  enter {
    send ⟦mail⟧ to "a" { subject: "s", body: "b" }
    drop ⟦slots⟧ h
  }
  on h.⟦expire⟧ -> T
}
terminal state T`,
    [Codes.ExpectedContextualWord, Codes.ExpectedContextualWord, Codes.ExpectedContextualWord, Codes.ExpectedContextualWord, Codes.ExpectedContextualWord],
  );
});

test("an unknown setting is FLOW021", (t) => {
  expectDiagnostics(t, inState("  subscribe G() as g {\n    ⟦Candidate⟧: role(\"x\")\n  }"), [Codes.UnknownSetting]);
});

test("Requires and Deadline take one expression (FLOW022)", (t) => {
  expectDiagnostics(t, inState("  subscribe G() as g {\n    Requires: true, ⟦false⟧\n    Deadline: 1d, ⟦2d, 3d⟧\n  }"), [Codes.SettingArity, Codes.SettingArity]);
});

test("After lists alias names only (FLOW023)", (t) => {
  expectDiagnostics(t, inState("  subscribe G() as g\n  subscribe G() as h { After: g, ⟦g.done⟧ }"), [Codes.AfterNotAlias]);
});

test("only a name or dotted path can be assigned (FLOW024)", (t) => {
  expectDiagnostics(t, inEnter("    ⟦len(names)⟧ = 1"), [Codes.InvalidAssignmentTarget]);
});

test("statements come before the arms of a handler (FLOW025)", (t) => {
  expectDiagnostics(t, inState("  subscribe G() as g\n  on g() {\n    when (n > 1) -> T\n    ⟦v.s = \"x\"⟧\n    default -> T\n  }"), [Codes.StatementAfterArm]);
});

test("send email needs subject and body, each once, and nothing else (FLOW026)", (t) => {
  expectDiagnostics(
    t,
    inEnter(`    send email to "a" ⟦{ subject: "s" }⟧
    send email to "a" { subject: "s", body: "b", ⟦body⟧: "c" }
    send email to "a" { subject: "s", body: "b", ⟦bcc⟧: "c" }`),
    [Codes.SendEmailFields, Codes.SendEmailFields, Codes.SendEmailFields],
  );
});

test("send email fields may be separated by commas or newlines, with a trailing comma", (t) => {
  expectClean(t, inEnter('    send email to "a" {\n      subject: "s",\n      body: "b",\n    }\n    send email to "a" {\n      body: "b"\n      subject: "s"\n    }'));
});
