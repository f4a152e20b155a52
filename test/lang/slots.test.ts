import test from "ava";
import { Codes } from "../../src/lang/codes.js";
import { compile } from "../../src/lang/compile.js";
import { expectClean, expectDiagnostics, inEnter, inState } from "./helpers.js";

// --- subscribe and handlers ----------------------------------------------------------------------

test("subscribe names must be the event's parameter names, in order (FLOW300)", (t) => {
  expectDiagnostics(
    t,
    inState(`  subscribe E(⟦b⟧, ⟦a⟧) as x
  subscribe E(⟦a⟧) as y
  subscribe E(a, b) as z`),
    [Codes.SubscribeParams, Codes.SubscribeParams, Codes.SubscribeParams],
  );
});

test("subscribe to an unknown event is FLOW102", (t) => {
  expectDiagnostics(t, inState("  subscribe ⟦Nope⟧() as x"), [Codes.UnknownEvent]);
});

test("a slot alias is unique within its state (FLOW100); other states may reuse it", (t) => {
  expectDiagnostics(
    t,
    `workflow W
event G()
initial state S { subscribe G() as g; subscribe G() as ⟦g⟧; on g() -> U }
state U { subscribe G() as g; on g() -> T }
terminal state T`,
    [Codes.DuplicateName],
  );
});

test("on x(…) binds as many names as the event has (FLOW301), each name once (FLOW100)", (t) => {
  expectDiagnostics(
    t,
    inState(`  subscribe E(a, b) as x
  subscribe E(a, b) as y
  on x(⟦only⟧) -> T
  on y(p, ⟦p⟧) -> T`),
    [Codes.HandlerParamCount, Codes.DuplicateName],
  );
});

test("handler names bind positionally: they need not be the event's names", (t) => {
  const r = expectClean(t, inState("  subscribe E(a, b) as x\n  on x(count, text) { v.i = count; v.s = text; default -> T }"));
  t.deepEqual(r.workflow!.states.S.on.x.params, ["count", "text"]);
});

test("on x(…) and on x.expired must name an alias of the state (FLOW104)", (t) => {
  expectDiagnostics(t, inState("  on ⟦zz⟧() -> T\n  on ⟦zz⟧.expired -> T"), [Codes.UnknownAlias, Codes.UnknownAlias]);
});

test("at most one on x(…) and one on x.expired per alias (FLOW302)", (t) => {
  expectDiagnostics(
    t,
    inState(`  subscribe G() as g { Deadline: 1d }
  on g() -> T
  on ⟦g⟧() -> T
  on g.expired -> T
  on ⟦g⟧.expired -> T`),
    [Codes.DuplicateHandler, Codes.DuplicateHandler],
  );
});

test("on x.expired on a slot without Deadline is a FLOW308 warning", (t) => {
  const r = expectDiagnostics(t, inState("  subscribe G() as g\n  on ⟦g⟧.expired -> T"), [Codes.ExpiredWithoutDeadline]);
  t.is(r.diagnostics[0].severity, "warning");
});

test("a milestone name is unique within its state (FLOW100)", (t) => {
  expectDiagnostics(t, inState("  milestone M when (true) { }\n  milestone ⟦M⟧ when (n > 1) { }"), [Codes.DuplicateName]);
});

// --- settings ------------------------------------------------------------------------------------------

test("each setting at most once (FLOW303)", (t) => {
  expectDiagnostics(t, inState('  subscribe G() as g {\n    Deadline: 1d\n    ⟦Deadline: 2d⟧\n  }'), [Codes.DuplicateSetting]);
});

test("Candidates entries are role(string) or user(string) matchers (FLOW304)", (t) => {
  expectDiagnostics(
    t,
    inState('  subscribe G() as g {\n    Candidates: role("a"), user(v.s), ⟦v.s⟧, ⟦lower("x")⟧, role(⟦n⟧)\n    Title: "G"\n  }'),
    [Codes.InvalidMatcher, Codes.InvalidMatcher, Codes.TypeMismatch],
  );
});

test("role() and user() outside Candidates are FLOW305", (t) => {
  expectDiagnostics(t, inEnter('    let m = ⟦role("x")⟧'), [Codes.MatcherOutsideCandidates]);
});

test("After names other aliases of the same state (FLOW306, FLOW104)", (t) => {
  expectDiagnostics(
    t,
    `workflow W
event G()
initial state S {
  subscribe G() as a { After: ⟦a⟧ }
  subscribe G() as b { After: ⟦elsewhere⟧ }
  on a() -> U
}
state U { subscribe G() as elsewhere; on elsewhere() -> T }
terminal state T`,
    [Codes.AfterSelf, Codes.UnknownAlias],
  );
});

test("an After cycle is FLOW307, reported once with the cycle", (t) => {
  const r = expectDiagnostics(
    t,
    inState(`  subscribe G() as a { After: ⟦b⟧ }
  subscribe G() as b { After: c }
  subscribe G() as c { After: a }
  subscribe G() as d { After: a, b }`),
    [Codes.AfterCycle],
  );
  t.true(r.diagnostics[0].message.includes("a → b → c → a"));
});

test("Requires reads run data, the fan-out variable and the event's parameters by their declared names", (t) => {
  expectClean(
    t,
    inState(`  subscribe E(a, b) as x for each who in names {
    Candidates: user(who)
    Requires: a > n && b != who && v.s != ""
    Deadline: at
  }
  on x(count, text) -> T`),
  );
});

// --- scopes --------------------------------------------------------------------------------------------------

test("a state's aliases are in scope in all of its handler bodies", (t) => {
  expectClean(
    t,
    inState(`  subscribe G() as g { Deadline: 1d }
  subscribe G() as h
  enter { v.o = h.CallbackUrl() }
  on g() { if (h.done) { drop slot h }; when (h.done) { v.o = h.CallbackUrl() } -> T; default { drop slot h } -> T }
  on g.expired { v.o = h.CallbackUrl(); default -> T }
  milestone M when (g.done && !h.done) { v.o = h.CallbackUrl() }`),
  );
});

test("an alias outside its state's handler bodies is FLOW309", (t) => {
  expectDiagnostics(
    t,
    `workflow W(v: V)
entity V { o: string? }
event G()
initial state S {
  subscribe G() as g { Requires: ⟦h⟧.done }
  subscribe G() as h
  on g() -> U
}
state U {
  subscribe G() as u
  enter { v.o = ⟦g⟧.CallbackUrl() }
  on u() { drop slot ⟦h⟧; default -> T }
}
terminal state T`,
    [Codes.AliasNotInScope, Codes.AliasNotInScope, Codes.AliasNotInScope],
  );
});

test("event parameters are in scope in their handler and its arms only", (t) => {
  expectDiagnostics(
    t,
    inState(`  subscribe E(a, b) as x
  on x(a, b) {
    let c = a + 1
    when (c > 1) { v.s = b } -> T
  }
  milestone M when (⟦a⟧ > 0) { }`),
    [Codes.UnknownName],
  );
});

test("the fan-out variable is in scope in the slot's settings and handlers, not elsewhere", (t) => {
  expectDiagnostics(
    t,
    inState(`  subscribe E(a, b) as x for each who in names {
    Candidates: user(who)
    Title: "x"
    Requires: who != b
  }
  subscribe G() as g {
    Candidates: user(⟦who⟧)
    Title: "g"
  }
  enter { v.s = ⟦who⟧ }
  on x(a, b) { v.s = who + b; default -> T }`),
    [Codes.UnknownName, Codes.UnknownName],
  );
});

test("the fan-out iterable sees workflow parameters only", (t) => {
  expectDiagnostics(t, inState("  subscribe G() as g for each x in ⟦g⟧"), [Codes.AliasNotInScope]);
});

test("handler names, fan-out variables and aliases may not hide visible names (FLOW119)", (t) => {
  expectDiagnostics(
    t,
    inState(`  subscribe E(a, b) as x for each ⟦n⟧ in names
  subscribe G() as ⟦v⟧
  subscribe E(a, b) as y for each ⟦y⟧ in names
  on x(⟦x⟧, b) -> T`),
    [Codes.Shadowing, Codes.Shadowing, Codes.Shadowing, Codes.Shadowing],
  );
});

test("a let is block scoped", (t) => {
  expectDiagnostics(t, inEnter("    if (n > 0) { let inner = 1 }\n    let outer = ⟦inner⟧"), [Codes.UnknownName]);
});

test("Authorize sees its principal, workflow parameters and the event's parameters", (t) => {
  expectDiagnostics(
    t,
    inState(
      "  enter { let ok = ⟦p⟧.id }",
      '[Authorize(p => p.hasRole("x") && contains(p.roles, "y") && p.id != "" && (p.email ?? "") != "" && n > 0 && ok)]\nevent A(ok: bool)',
    ),
    [Codes.UnknownName],
  );
});

test("principal members are id, email, roles and hasRole(string) (FLOW106, FLOW200, FLOW206)", (t) => {
  expectDiagnostics(
    t,
    inState("", "[Authorize(p => p.⟦name⟧ == \"x\" || p.hasRole(⟦1⟧) || ⟦p.hasRole()⟧ || p.⟦hasRole⟧ == true)]\nevent A()"),
    [Codes.UnknownMember, Codes.TypeMismatch, Codes.ArgumentCount, Codes.UnknownMember],
  );
});

// --- statements -------------------------------------------------------------------------------------------------

test("assigning a workflow parameter, an event parameter, the fan-out variable or an alias is FLOW315", (t) => {
  expectDiagnostics(
    t,
    inState(`  subscribe E(a, b) as x for each who in names
  subscribe G() as g
  enter {
    ⟦n⟧ = 1
    ⟦g⟧ = 1
  }
  on x(a, b) {
    ⟦a⟧ = 1
    ⟦who⟧ = "x"
    default -> T
  }`),
    [Codes.ReadOnlyAssignment, Codes.ReadOnlyAssignment, Codes.ReadOnlyAssignment, Codes.ReadOnlyAssignment],
  );
});

test("only param.field of an entity-typed workflow parameter is assignable (FLOW315, FLOW316)", (t) => {
  expectDiagnostics(
    t,
    `workflow W(v: V, n: int, vs: list<V>)
entity V { s: string; inner: I? }
entity I { x: int }
event G()
initial state S {
  subscribe G() as g for each e in vs
  enter {
    let copy = v
    ⟦copy.s⟧ = "x"
    ⟦n.x⟧ = 1
    ⟦v.inner.x⟧ = 1
  }
  on g() { ⟦e.s⟧ = "x"; default -> T }
}
terminal state T`,
    [Codes.ReadOnlyAssignment, Codes.InvalidAssignmentPath, Codes.InvalidAssignmentPath, Codes.ReadOnlyAssignment],
  );
});

test("assigning an unknown field is FLOW106", (t) => {
  expectDiagnostics(t, inEnter('    v.⟦nope⟧ = "x"'), [Codes.UnknownMember]);
});

test("a statement that is not a call is FLOW317", (t) => {
  expectDiagnostics(t, inEnter("    ⟦n + 1⟧\n    len(names)"), [Codes.ExpressionNotCall]);
});

test("drop slot names an alias of this state (FLOW104)", (t) => {
  expectDiagnostics(t, inEnter("    drop slot ⟦nope⟧"), [Codes.UnknownAlias]);
});

test("a slot alias is not a value, and has only done and CallbackUrl() (FLOW314, FLOW106, FLOW121)", (t) => {
  expectDiagnostics(
    t,
    inEnter("    let a = ⟦g⟧\n    let b = g.⟦size⟧\n    let c = ⟦g.CallbackUrl⟧\n    let d = ⟦g.done()⟧", "  subscribe G() as g"),
    [Codes.SlotNotAValue, Codes.UnknownMember, Codes.SlotNotAValue, Codes.NotCallable],
  );
});

// --- CallbackUrl() ------------------------------------------------------------------------------------------------

test("x.CallbackUrl() is a string; x.done is a bool", (t) => {
  expectClean(t, inEnter("    v.o = g.CallbackUrl()\n    let u = g.CallbackUrl() + \"?\"\n    let d = g.done || !g.done", "  subscribe G() as g"));
});

test("CallbackUrl() on a fanned-out slot is refused (FLOW310) at its line", (t) => {
  const source = `workflow W(v: V, signers: list<string>)
entity V { url: string? }
event Sign(agree: bool)
initial state S {
  subscribe Sign(agree) as signatures for each s in signers
  enter {
    v.url = signatures.CallbackUrl()
  }
  on signatures(agree) -> T
}
terminal state T`;
  const r = compile(source, "fan.flow");
  t.is(r.workflow, null);
  t.deepEqual(
    r.diagnostics.map((d) => [d.code, d.severity, d.range.start.line, d.range.start.column, d.range.end.column]),
    [[Codes.CallbackUrlFanOut, "error", 7, 13, 37]],
  );
});

test("CallbackUrl() inside on x(…) / on x.expired of that same x is FLOW311", (t) => {
  expectDiagnostics(
    t,
    inState(`  subscribe G() as g { Deadline: 1d }
  subscribe G() as h
  on g() { v.o = ⟦g.CallbackUrl()⟧; when (true) { v.o = ⟦g.CallbackUrl()⟧ } -> T }
  on g.expired { v.o = ⟦g.CallbackUrl()⟧; v.o = h.CallbackUrl(); default -> T }`),
    [Codes.CallbackUrlInOwnHandler, Codes.CallbackUrlInOwnHandler, Codes.CallbackUrlInOwnHandler],
  );
});

test("CallbackUrl() for an event with [Authorize] is a FLOW312 warning", (t) => {
  const r = expectDiagnostics(t, inEnter("    v.o = ⟦a.CallbackUrl()⟧", "  subscribe A() as a", "[Authorize(p => p.hasRole(\"x\"))]\nevent A()"), [
    Codes.CallbackUrlAuthorize,
  ]);
  t.is(r.diagnostics[0].severity, "warning");
  t.truthy(r.workflow);
});

test("a minted link whose value is discarded is a FLOW313 warning", (t) => {
  const r = expectDiagnostics(t, inEnter("    ⟦g.CallbackUrl()⟧", "  subscribe G() as g"), [Codes.CallbackUrlDiscarded]);
  t.is(r.diagnostics[0].severity, "warning");
});

test("CallbackUrl() takes no arguments (FLOW206)", (t) => {
  expectDiagnostics(t, inEnter("    v.o = ⟦g.CallbackUrl(1)⟧", "  subscribe G() as g"), [Codes.ArgumentCount]);
});

// --- map event ------------------------------------------------------------------------------------------------------

test("map event: every parameter of the new event once, typed against the old parameters", (t) => {
  const r = expectClean(t, inState("", "map event E(a: int, c: string) to E(a: a * 2, b: c + \"!\")"));
  t.deepEqual(r.workflow!.maps.map((m) => [m.from, m.fromParams.map((p) => p.name), m.to, m.args.map((a) => a.name)]), [
    ["E", ["a", "c"], "E", ["a", "b"]],
  ]);
});

test("map event errors: unknown target, unknown/duplicate/missing names, types, scope", (t) => {
  expectDiagnostics(
    t,
    inState(
      "",
      `map event E(a: int) to ⟦E⟧(a: a, ⟦zz⟧: 1, ⟦a⟧: 2)
map event ⟦E⟧(a: int) to E(a: ⟦"x"⟧, b: ⟦n⟧)
map event Old() to ⟦Nope⟧()`,
    ),
    [
      Codes.MapMissingParam,
      Codes.MapUnknownParam,
      Codes.DuplicateName,
      Codes.DuplicateName,
      Codes.TypeMismatch,
      Codes.UnknownName,
      Codes.UnknownEvent,
    ],
  );
});

test("map event parameters follow event rules (FLOW112, FLOW113)", (t) => {
  expectDiagnostics(t, inState("", "map event Old(p: ⟦principal⟧, x: ⟦V⟧) to G()"), [Codes.PrincipalNotAllowed, Codes.EntityTypeNotAllowed]);
});

test("a slot with Candidates and no Title is a FLOW140 warning at its Candidates (issue 43 item 4); with a Title, or without Candidates, none", (t) => {
  const r = expectDiagnostics(t, inState('  subscribe G() as g {\n    ⟦Candidates: role("finance")⟧\n  }'), [Codes.CandidatesWithoutTitle]);
  const d = r.diagnostics.find((x) => x.code === Codes.CandidatesWithoutTitle)!;
  t.is(d.severity, "warning");
  t.is(Codes.CandidatesWithoutTitle, "FLOW140");
  t.regex(d.message, /slot 'g' has Candidates but no Title: the people it asks see only "Answer: G"/);
  t.truthy(r.workflow, "a warning: the workflow compiles");
  expectDiagnostics(t, inState('  subscribe G() as g {\n    Candidates: role("finance")\n    Title: "Approve?"\n  }'), []);
  expectDiagnostics(t, inState("  subscribe G() as g"), []);
});
