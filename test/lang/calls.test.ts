/**
 * The compiler side of calls and results (v0.5; docs/language.md "Calls", "Results"; issue 40
 * item 1): `call http | task | workflow … as x [returns E] [for each …] { … }` as a state member
 * creating a slot, its settings and their types (FLOW370–FLOW377), `on x.failed` with `x.error`,
 * `x.status`, `x.attempts`, `workflow W(…) returns E` (FLOW378) and `result { … }` (FLOW380,
 * FLOW381), and what the compiled form keeps for the runtime.
 */
import test from "ava";
import { compile } from "../../src/lang/compile.js";
import { Codes } from "../../src/lang/codes.js";
import { expectClean, expectDiagnostics } from "./helpers.js";

const wrap = (state: string, header = "workflow W(supplier: Supplier, names: list<string>, n: int)", decls = "") => `${header}
entity Supplier { name: string; country: string; note: string? }
event Scored(score: int, band: string)
event Done(state: string)
event Ok()
${decls}
initial state Check {
${state}
}
terminal state Good
terminal state Manual`;

const credit = wrap(`  call http "credit-bureau" as credit returns Scored {
    Method: POST
    Path: "/v1/score"
    Input { company: supplier.name, country: supplier.country }
    Timeout: 10s
    Attempts: 5
    Deadline: 1h
  }
  on credit(score, band) { when (score >= 700) -> Good  default -> Manual }
  on credit.failed {
    supplier.note = "credit check failed: " + credit.error + " (" + (credit.attempts + 0) + " attempts)"
    when (credit.status == 422) -> Manual
    default -> Manual
  }
  on credit.expired -> Manual`);

test("the language reference's call http example compiles, and its compiled slot carries the call", (t) => {
  const r = expectClean(t, credit);
  const slot = r.workflow!.states.Check.slots[0];
  t.is(slot.kind, "call");
  t.is(slot.alias, "credit");
  t.is(slot.event, "Scored");
  t.deepEqual(slot.params, ["score", "band"]);
  t.is(slot.candidates, null);
  t.is(slot.requires, null);
  t.is(slot.deadline?.kind, "literal");
  const call = slot.call!;
  t.deepEqual(call.callee, { type: "http", endpoint: "credit-bureau", method: "POST" });
  t.is(call.path?.kind, "literal");
  t.deepEqual(call.input.map((f) => f.name), ["company", "country"]);
  t.is(call.timeout?.kind, "literal");
  t.is(call.attempts?.kind, "literal");
  t.truthy(r.workflow!.states.Check.failed?.credit);
  t.truthy(r.workflow!.states.Check.expired.credit);
});

test("Method defaults to POST; no Input is an empty list; no Timeout/Attempts is null (the runtime's defaults)", (t) => {
  const r = expectClean(t, wrap(`  call http "ping" as ping\n  on ping() -> Good`));
  const slot = r.workflow!.states.Check.slots[0];
  t.is(slot.event, "");
  t.deepEqual(slot.params, []);
  t.deepEqual(slot.call, { callee: { type: "http", endpoint: "ping", method: "POST" }, path: null, input: [], timeout: null, attempts: null });
  t.is(r.workflow!.states.Check.failed, undefined, "no on x.failed: the key is absent");
});

test("call task and call workflow parse, type-check and compile; Attempts on a workflow call is allowed", (t) => {
  const r = expectClean(
    t,
    wrap(`  call task "credit-check" as task returns Scored { Input { company: supplier.name }; Timeout: 5m; Attempts: 2 }
  call workflow SupplierOnboarding as child returns Done { Input { supplier: supplier, names: names }; After: task; Attempts: 1; Deadline: 30d }
  on task(score, band) {}
  on child(state) { when (state == "Onboarded") -> Good  default -> Manual }
  on child.failed -> Manual`),
  );
  const [task, child] = r.workflow!.states.Check.slots;
  t.deepEqual(task.call!.callee, { type: "task", task: "credit-check" });
  t.deepEqual(child.call!.callee, { type: "workflow", workflow: "SupplierOnboarding" });
  t.deepEqual(child.after, ["task"]);
  t.deepEqual(child.call!.input.map((f) => f.name), ["supplier", "names"]);
});

test("a fanned-out call with Quorum and each; x.error/x.status/x.attempts name one element in its own handlers", (t) => {
  const r = expectClean(
    t,
    wrap(`  call http "lookup" as lookups returns Ok for each c in names {
    Path: "/v1/" + c
    Quorum: 1
    each { supplier.note = c + " " + (lookups.attempts + 1) }
  }
  on lookups() { when (lookups.done) -> Good }
  on lookups.failed { supplier.note = c + ": " + lookups.error + " " + (lookups.status ?? 0) }`),
  );
  const slot = r.workflow!.states.Check.slots[0];
  t.is(slot.forEach?.variable, "c");
  t.truthy(slot.quorum);
  t.is(slot.each?.length, 1);
});

test("x.error is a string inside on x.failed and a string? elsewhere; x.status an int?; x.attempts an int", (t) => {
  expectDiagnostics(
    t,
    wrap(`  call http "ping" as ping
  on ping() {
    let e: string = ""
  }
  after 1h { supplier.name = ⟦ping.error⟧ }
  every 1h { supplier.note = ping.error; supplier.name = "" + ping.attempts }
  on ping.failed { supplier.name = ping.error; let s = ⟦ping.status + 1⟧ }`).replace("let e: string = \"\"", "let e = 1"),
    [Codes.TypeMismatch, Codes.OperatorTypes],
  );
});

test("a fanned-out call's x.error outside its handlers is FLOW377", (t) => {
  expectDiagnostics(
    t,
    wrap(`  call http "lookup" as lookups for each c in names
  after 1h { supplier.note = ⟦lookups.error⟧ }`),
    [Codes.CallMemberFanOut],
  );
});

test("on x.failed of a subscribe is FLOW375; x.error of a subscribe is FLOW106", (t) => {
  expectDiagnostics(
    t,
    wrap(`  subscribe Ok() as ok
  on ⟦ok⟧.failed -> Manual
  on ok() { supplier.note = ok.⟦error⟧ }`),
    [Codes.FailedNotACall, Codes.UnknownMember],
  );
});

test("a call's slot has no link and no task page (FLOW376), and no message answers it (FLOW318)", (t) => {
  expectDiagnostics(
    t,
    wrap(`  call http "ping" as ping
  enter {
    supplier.note = ⟦ping.CallbackUrl()⟧
    supplier.note = ⟦ping.TaskUrl()⟧
    send message to "chat" { text: "x", answer: ⟦ping⟧ }
  }`),
    [Codes.CallHasNoLink, Codes.CallHasNoLink, Codes.AnswerNotASlot],
  );
});

test("a person's settings on a call and a call's settings on a subscribe are FLOW371", (t) => {
  expectDiagnostics(
    t,
    wrap(`  call http "ping" as ping {
    ⟦Candidates: role("x")⟧
    ⟦Requires: n > 1⟧
    ⟦Title: "t"⟧
  }
  subscribe Ok() as ok {
    ⟦Method: GET⟧
    ⟦Timeout: 10s⟧
    ⟦Input { a: 1 }⟧
  }`),
    [
      Codes.CallSettingMisplaced, Codes.CallSettingMisplaced, Codes.CallSettingMisplaced,
      Codes.CallSettingMisplaced, Codes.CallSettingMisplaced, Codes.CallSettingMisplaced,
    ],
  );
});

test("Method and Path only on call http; Timeout not on call workflow (FLOW371)", (t) => {
  expectDiagnostics(
    t,
    wrap(`  call task "t" as a { ⟦Method: GET⟧; ⟦Path: "/x"⟧ }
  call workflow Child as b { ⟦Timeout: 1h⟧; ⟦Path: "/x"⟧ }`),
    [Codes.CallSettingMisplaced, Codes.CallSettingMisplaced, Codes.CallSettingMisplaced, Codes.CallSettingMisplaced],
  );
});

test("Method must be one of the five, a bare word (FLOW370)", (t) => {
  expectDiagnostics(t, wrap(`  call http "p" as p { Method: ⟦post⟧ }`), [Codes.CallMethod]);
  expectDiagnostics(t, wrap(`  call http "p" as p { Method: ⟦FETCH⟧ }`), [Codes.CallMethod]);
  expectDiagnostics(t, wrap(`  call http "p" as p { Method: ⟦"GET"⟧ }`), [Codes.CallMethod]);
  for (const m of ["GET", "POST", "PUT", "PATCH", "DELETE"]) {
    const r = expectClean(t, wrap(`  call http "p" as p { Method: ${m} }`));
    t.deepEqual(r.workflow!.states.Check.slots[0].call!.callee, { type: "http", endpoint: "p", method: m as "GET" });
  }
});

test("Path a string, Timeout a positive duration (FLOW373); Attempts an int ≥ 1 (FLOW374)", (t) => {
  expectDiagnostics(
    t,
    wrap(`  call http "p" as p { Path: ⟦n⟧; Timeout: ⟦10⟧; Attempts: ⟦"3"⟧ }
  call http "q" as q { Path: ⟦supplier.note⟧; Timeout: ⟦0s⟧; Attempts: ⟦0⟧ }`),
    [
      Codes.CallSettingType, Codes.CallSettingType, Codes.CallAttempts,
      Codes.CallSettingType, Codes.CallSettingType, Codes.CallAttempts,
    ],
  );
  expectClean(t, wrap(`  call http "p" as p { Path: "/v1/" + supplier.name; Timeout: 1s; Attempts: n }`));
});

test("Input fields: typed expressions, each name once (FLOW100), a matcher only in Candidates (FLOW305)", (t) => {
  expectDiagnostics(
    t,
    wrap(`  call http "p" as p { Input { a: ⟦nope⟧, b: 1, ⟦b⟧: 2, c: ⟦p⟧, d: [1, 2], e: null, f: supplier } }`),
    [Codes.UnknownName, Codes.DuplicateName, Codes.AliasNotInScope],
  );
  expectDiagnostics(t, wrap(`  call http "p" as p { Input { a: ⟦role("x")⟧ } }`), [Codes.MatcherOutsideCandidates]);
  // the fields may be separated by newlines, `;` or `,`
  expectClean(t, wrap(`  call http "p" as p {\n    Input {\n      a: 1\n      b: "x"; c: true,\n    }\n  }`));
});

test("call aliases are unique within the state, shared with subscribe (FLOW100); After across them works", (t) => {
  expectDiagnostics(
    t,
    wrap(`  subscribe Ok() as x
  call http "p" as ⟦x⟧
  call http "q" as y { After: x }
  call http "r" as z { After: ⟦nope⟧ }`),
    [Codes.DuplicateName, Codes.UnknownAlias],
  );
});

test("returns names an event (FLOW378, with the near name); on x(…) binds its parameters (FLOW301)", (t) => {
  expectDiagnostics(
    t,
    wrap(`  call http "p" as p returns ⟦Scord⟧
  call http "q" as q returns Scored
  call http "r" as r
  on q(⟦score⟧) -> Good
  on r(⟦a⟧) -> Good`),
    [Codes.UnknownReturns, Codes.HandlerParamCount, Codes.HandlerParamCount],
  );
  const r = compile(wrap(`  call http "p" as p returns Scord`), "t.flow");
  t.regex(r.diagnostics[0].message, /did you mean 'Scored'/);
});

test("calls in a terminal state are FLOW110; a call in a state left at once warns FLOW343", (t) => {
  expectDiagnostics(
    t,
    `workflow W()
event Ok()
initial state S { enter { default -> T }
  call http "p" as ⟦p⟧ }
terminal state T { call http "q" as ⟦q⟧ }`,
    [Codes.LeftAtOnce, Codes.TerminalStateMember],
  );
});

test("call, http, task, returns and result stay names elsewhere", (t) => {
  expectClean(
    t,
    `workflow W(http: int, returns: bool)
event E(task: string, result: int)
initial state S {
  subscribe E(task, result) as call
  on call(task, result) { let r = result + 1; default -> T }
}
terminal state T`,
  );
});

test("an unknown word after call is FLOW020", (t) => {
  const r = compile(wrap(`  call smtp "x" as p`), "t.flow");
  t.true(r.diagnostics.some((d) => d.severity === "error"));
  t.is(r.workflow, null);
});

// --- results -------------------------------------------------------------------------------------

const results = (body: string, header = "workflow Credit(company: string) returns Scored") => `${header}
event Scored(score: int, band: string, note: string?)
event Go()
initial state S {
  subscribe Go() as go
  on go() {
${body}
    default -> T
  }
}
terminal state T`;

test("workflow W(…) returns E and result { … } compile; the compiled form keeps both", (t) => {
  const r = expectClean(t, results(`    result { score: 700, band: "A" + company }`));
  t.is(r.workflow!.returns, "Scored");
  const stmt = r.workflow!.states.S.on.go.handler.statements[0];
  t.is(stmt.kind, "result");
  if (stmt.kind === "result") t.deepEqual(stmt.fields.map((f) => f.name.name), ["score", "band"]);
  const none = expectClean(t, results(`    let x = 1`, "workflow Credit(company: string)"));
  t.false("returns" in none.workflow!);
});

test("result without returns is FLOW380; returns naming no event is FLOW378", (t) => {
  expectDiagnostics(t, results(`    ⟦result⟧ { score: 1, band: "b" }`, "workflow Credit(company: string)"), [Codes.ResultWithoutReturns]);
  expectDiagnostics(t, results(`    let x = 1`, "workflow Credit(company: string) returns ⟦Nope⟧"), [Codes.UnknownReturns]);
});

test("result's fields: parameters of E (FLOW381), typed (FLOW200), every required one given (FLOW381)", (t) => {
  expectDiagnostics(
    t,
    results(`    result { score: ⟦"high"⟧, band: "b", ⟦bnad⟧: "x" }
    ⟦result⟧ { band: "b" }
    result { score: 1, band: "b", note: null }
    result { score: 1, band: "b", ⟦band⟧: "c" }`),
    [Codes.TypeMismatch, Codes.ResultFields, Codes.ResultFields, Codes.DuplicateName],
  );
});

test("a returns event's 'state' is the terminal state's name: a string, never set by result (FLOW381)", (t) => {
  expectClean(
    t,
    `workflow W() returns Done
event Done(state: string, ok: bool)
initial state S { enter { result { ok: true }; default -> T } }
terminal state T`,
  );
  expectDiagnostics(
    t,
    `workflow W() returns Done
event Done(⟦state⟧: int)
initial state S { enter { result { ⟦state⟧: 1 }; default -> T } }
terminal state T`,
    [Codes.ResultFields, Codes.ResultFields],
  );
});

test("result may stand in any handler body: enter, timers, each, milestones, arms", (t) => {
  expectClean(
    t,
    `workflow W(names: list<string>) returns Done
event Done(n: int)
event Go()
initial state S {
  subscribe Go() as go for each x in names { each { result { n: 1 } } }
  enter { result { n: 0 } }
  after 1h { result { n: 2 } }
  milestone M when (go.done) { result { n: 3 } }
  on go() { when (go.done) { result { n: 4 } } -> T }
}
terminal state T { enter { result { n: 5 } } }`,
  );
});
