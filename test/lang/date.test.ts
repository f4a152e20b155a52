/**
 * The `date` type in the checker (language reference, "Types": a calendar day; compares with
 * `<`, `==`…; `d + 3d`; `today()` in UTC). Runtime behaviour: test/engine/date-values.test.ts and
 * test/examples/date.test.ts.
 */
import test from "ava";
import type { BinaryExpr, Expr } from "../../src/lang/ast.js";
import { Codes } from "../../src/lang/codes.js";
import { expectClean, expectDiagnostics } from "./helpers.js";

/** A workflow with a date parameter `d`, an entity with a `date?` field, and `body` in S's enter. */
function withDates(body: string, extra = ""): string {
  return `workflow W(d: date, at: datetime, o: O)
entity O { due: date?; label: string; stamp: datetime? }
event Confirm(day: date, maybe: date?)
${extra}
initial state S {
  enter {
${body}
  }
}
terminal state T
`;
}

function firstLet(t: Parameters<typeof expectClean>[0], body: string): Expr {
  const r = expectClean(t, withDates(body));
  const enter = r.ast!.states[0].members.find((m) => m.kind === "enter");
  if (enter?.kind !== "enter" || enter.body[0].kind !== "let") throw new Error("no let");
  return enter.body[0].value;
}

test("date is a type of parameters, entity fields and event parameters; its compiled form is date", (t) => {
  const r = expectClean(t, withDates("    let x = d"));
  const wf = r.workflow!;
  t.deepEqual(wf.params.find((p) => p.name === "d")!.type, { kind: "date", optional: false });
  t.deepEqual(wf.entities.O.fields.due.type, { kind: "date", optional: true });
  t.deepEqual(wf.events.Confirm.params.map((p) => p.type), [{ kind: "date", optional: false }, { kind: "date", optional: true }]);
});

test("date ± duration is a date, date − date a duration; dates order and compare; today() is a date", (t) => {
  expectClean(
    t,
    withDates(`    let later = d + 3d
    let earlier = 2d + d - 1d
    let gap = later - earlier
    let ok = later > earlier && gap >= 1d && d == today() && d != later && today() <= d
    o.due = d + 7d
    let maybe = (o.due ?? today()) < d
    let text = "due on " + d + " or " + o.due`),
  );
  const e = firstLet(t, "    let g = d - today()") as BinaryExpr;
  t.deepEqual(e.operandTypes, { left: "date", right: "date" });
});

test("a date does not mix with a datetime, a number or an optional date (FLOW201)", (t) => {
  expectDiagnostics(
    t,
    withDates(`    let a = ⟦d + at⟧
    let b = ⟦d < at⟧
    let c = ⟦d + 1⟧
    let e = ⟦d == at⟧
    let f = ⟦o.due + 1d⟧
    let g = ⟦d + d⟧`),
    [Codes.OperatorTypes, Codes.OperatorTypes, Codes.OperatorTypes, Codes.OperatorTypes, Codes.OperatorTypes, Codes.OperatorTypes],
  );
});

test("a date is not stored where a datetime is expected, nor the other way (FLOW200)", (t) => {
  expectDiagnostics(t, withDates("    o.due = ⟦at⟧\n    o.stamp = ⟦today()⟧"), [Codes.TypeMismatch, Codes.TypeMismatch]);
});

test("today() takes no argument (FLOW206)", (t) => {
  expectDiagnostics(t, withDates("    let x = ⟦today(d)⟧"), [Codes.ArgumentCount]);
});
