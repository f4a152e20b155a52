/**
 * Issue 19 items 1 and 2 in the compiler (language reference §10): timer members and `enter` arms
 * parse, type-check and compile; `after`/`every` stay usable as names; the new codes FLOW340–343.
 */
import test from "ava";
import { Codes } from "../../src/lang/codes.js";
import { compile } from "../../src/lang/compile.js";
import { expectClean, expectDiagnostics, inState } from "./helpers.js";

test("after, every and every…after compile with their handlers and schedules", (t) => {
  const r = expectClean(
    t,
    inState(`  subscribe G() as g { Deadline: 7d }
  every 2d after 1d {
    send email to v.s { subject: "Reminder", body: g.CallbackUrl() }
  }
  after 6d { v.i = v.i + 1 }
  after 10d -> T
  every 1h {
    when (v.i > 3) -> T
  }
  on g() -> T`),
  );
  const timers = r.workflow!.states.S.timers!;
  t.deepEqual(timers.map((x) => [x.index, x.every, x.schedule, x.first !== null]), [
    [0, true, "every 2d after 1d", true],
    [1, false, "after 6d", false],
    [2, false, "after 10d", false],
    [3, true, "every 1h", false],
  ]);
  t.is(timers[3].handler.arms.length, 1);
  t.is(r.workflow!.states.T.timers, undefined);
});

test("the §10 examples compile: a Review state with reminders, and routing on entry on one line", (t) => {
  expectClean(
    t,
    `workflow W(vendor: Vendor, amount: int)
entity Vendor { name: string; contactEmail: string; approvalUrl: string? }
event Approve(ok: bool, note: string?)
initial state Triage { enter { when (amount <= 100) -> Approved  default -> Review } }
state Review {
  subscribe Approve(ok, note) as decision { Deadline: 7d }
  every 2d after 1d {
    send email to vendor.contactEmail { subject: "Reminder: approve " + vendor.name, body: vendor.approvalUrl ?? "" }
  }
  after 6d { send email to "finance-leads@example.com" { subject: "Escalation", body: "No answer yet" } }
  on decision(ok, note) -> Approved
}
terminal state Approved
`,
  );
});

test("after and every are still names elsewhere", (t) => {
  expectClean(t, inState("  enter {\n    let after = 1\n    let every = after + 1\n    v.i = every\n  }"));
});

test("timer durations are durations (FLOW340); every needs at least a minute (FLOW341)", (t) => {
  expectDiagnostics(t, inState(`  after ⟦"2d"⟧ { v.i = 1 }
  every ⟦30s⟧ { v.i = 2 }
  every 1m after ⟦n⟧ { v.i = 3 }
  every ⟦at⟧ { v.i = 4 }`), [Codes.TimerType, Codes.TimerPeriodTooShort, Codes.TimerType, Codes.TimerType]);
});

test("a timer's handler is checked like any other: names, arms, unknown states", (t) => {
  expectDiagnostics(t, inState(`  after 1d {
    v.i = ⟦nope⟧
    when (true) -> ⟦Nowhere⟧
  }`), [Codes.UnknownName, Codes.UnknownState]);
});

test("after D takes one duration: 'after 1d after 2d' is a syntax error", (t) => {
  const r = compile(inState("  after 1d after 2d { v.i = 1 }"));
  t.true(r.diagnostics.some((d) => d.code === Codes.UnexpectedToken));
});

test("terminal states have no timers and no enter arms (FLOW110)", (t) => {
  expectDiagnostics(
    t,
    `workflow W
initial state S { enter { default -> T } }
terminal state T {
  after ⟦1d⟧ { }
  enter { ⟦default -> S⟧ }
}
`,
    [Codes.TerminalStateMember, Codes.TerminalStateMember],
  );
});

test("only one enter block may route (FLOW342); arms in enter are checked", (t) => {
  expectDiagnostics(t, inState(`  enter { when (v.i > 1) -> T }
  enter { ⟦default -> T⟧ }
  enter { ⟦when (⟦n⟧) -> T⟧ }`), [Codes.EnterArmsTwice, Codes.EnterArmsTwice, Codes.ConditionNotBool]);
});

test("a state left at once by every path: its slots and timers are unreachable (FLOW343, a warning)", (t) => {
  const r = expectDiagnostics(
    t,
    inState(`  subscribe G() as ⟦g⟧
  after ⟦1d⟧ { v.i = 1 }
  enter { when (n > 1) -> T  default -> T }
  on g() -> T`),
    [Codes.LeftAtOnce, Codes.LeftAtOnce],
  );
  t.truthy(r.workflow);
  // A state that may stay (no default) gets no warning.
  expectClean(t, inState("  subscribe G() as g\n  enter { when (n > 1) -> T }\n  on g() -> T"));
});

test("states reached only through enter or timer arms are reachable (no FLOW111)", (t) => {
  const r = compile(`workflow W(n: int)
initial state A { enter { when (n > 1) -> B  default -> C } }
state B { after 1d -> D }
state C { enter { default -> D } }
terminal state D
`);
  t.deepEqual(r.diagnostics.map((d) => d.code), []);
});
