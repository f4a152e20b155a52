import test from "ava";
import { Codes } from "../../src/lang/codes.js";
import { expectClean, expectDiagnostics, inEnter, inState } from "./helpers.js";

// --- states ------------------------------------------------------------------------------------

test("no initial state is FLOW107 at the workflow name", (t) => {
  expectDiagnostics(t, "workflow ⟦W⟧\nstate S\nterminal state T\n", [Codes.NoInitialState]);
});

test("a second initial state is FLOW108 at its name", (t) => {
  expectDiagnostics(t, "workflow W\ninitial state S\ninitial state ⟦S2⟧\nterminal state T\n", [Codes.MultipleInitialStates]);
});

test("no terminal state is FLOW109 at the workflow name", (t) => {
  expectDiagnostics(t, "workflow ⟦W⟧\ninitial state S\n", [Codes.NoTerminalState]);
});

test("a state named twice is FLOW100 at the second", (t) => {
  expectDiagnostics(t, "workflow W\ninitial state S\nterminal state T\nterminal state ⟦T⟧\n", [Codes.DuplicateName]);
});

test("an arm naming an unknown state is FLOW103 at the name", (t) => {
  expectDiagnostics(t, inState("  subscribe G() as g\n  on g() { when (n > 0) -> ⟦Nowhere⟧; default -> T }"), [Codes.UnknownState]);
});

test("a terminal state has no subscribe, no handlers, no milestones (FLOW110); enter is fine", (t) => {
  expectDiagnostics(
    t,
    `workflow W
event G()
initial state S { subscribe G() as g; on g() -> T }
terminal state T {
  subscribe G() as ⟦h⟧
  on ⟦h⟧() -> S
  on ⟦h⟧.expired -> S
  milestone ⟦M⟧ when (true) { }
  enter { let x = 1 }
}`,
    [Codes.TerminalStateMember, Codes.TerminalStateMember, Codes.TerminalStateMember, Codes.TerminalStateMember],
  );
});

test("a state no arm leads to from the initial state is a FLOW111 warning", (t) => {
  const r = expectDiagnostics(
    t,
    `workflow W
event G()
initial state S { subscribe G() as g; on g() -> T }
state ⟦Lost⟧ { subscribe G() as g; on g() -> Lost2 }
state ⟦Lost2⟧
terminal state T`,
    [Codes.UnreachableState, Codes.UnreachableState],
  );
  t.is(r.diagnostics[0].severity, "warning");
  t.truthy(r.workflow);
});

// --- events, entities, parameters ------------------------------------------------------------------

test("duplicate events, entities, fields and parameters are FLOW100 at the second", (t) => {
  expectDiagnostics(
    t,
    `workflow W(a: int, ⟦a⟧: string)
entity V { x: int; ⟦x⟧: int }
entity ⟦V⟧ { }
event E(p: int, ⟦p⟧: int)
event ⟦E⟧()
initial state S
terminal state T`,
    [Codes.DuplicateName, Codes.DuplicateName, Codes.DuplicateName, Codes.DuplicateName, Codes.DuplicateName],
  );
});

test("an unknown type is FLOW101", (t) => {
  expectDiagnostics(t, "workflow W(a: ⟦Nope⟧)\nevent E(x: ⟦strng?⟧)\ninitial state S\nterminal state T\n", [Codes.UnknownType, Codes.UnknownType]);
});

test("principal is not a type of workflow parameters, event parameters or fields (FLOW112)", (t) => {
  expectDiagnostics(
    t,
    `workflow W(p: ⟦principal⟧)
entity V { who: ⟦principal?⟧ }
event E(by: list<⟦principal⟧>)
initial state S
terminal state T`,
    [Codes.PrincipalNotAllowed, Codes.PrincipalNotAllowed, Codes.PrincipalNotAllowed],
  );
});

test("entity types are not event parameters; an entity parameter is not optional (FLOW113)", (t) => {
  expectDiagnostics(
    t,
    `workflow W(⟦v⟧: V?)
entity V { s: string }
event E(v: ⟦V⟧)
initial state S
terminal state T`,
    [Codes.EntityTypeNotAllowed, Codes.EntityTypeNotAllowed],
  );
});

test("list takes one element type and nothing else does (FLOW114)", (t) => {
  expectDiagnostics(t, "workflow W(a: ⟦list⟧, b: ⟦int<string>⟧)\ninitial state S\nterminal state T\n", [Codes.InvalidTypeArguments, Codes.InvalidTypeArguments]);
});

test("an entity containing itself through non-optional fields is FLOW115", (t) => {
  expectDiagnostics(
    t,
    `workflow W
entity A { ⟦b⟧: B }
entity B { a: A }
entity C { next: C?; all: list<C> }
initial state S
terminal state T`,
    [Codes.EntityCycle],
  );
});

test("an entity may not take a built-in type name (FLOW116)", (t) => {
  expectDiagnostics(t, "workflow W\nentity ⟦string⟧ { }\nentity ⟦list⟧ { }\ninitial state S\nterminal state T\n", [Codes.ReservedTypeName, Codes.ReservedTypeName]);
});

test("entities nest, optionally, and lists of entities are values", (t) => {
  expectClean(
    t,
    `workflow W(order: Order, lines: list<Line>)
entity Order { buyer: Person; shipTo: Person?; lines: list<Line> }
entity Person { name: string; email: string? }
entity Line { sku: string; qty: int }
event G()
initial state S {
  subscribe G() as g for each l in lines {
    Candidates: user(l.sku)
  }
  enter {
    order.buyer = order.buyer
    let n = order.shipTo.name ?? order.buyer.name
    let k = len(order.lines)
  }
  on g() -> T
}
terminal state T`,
  );
});

// --- annotations --------------------------------------------------------------------------------------

test("an unknown annotation is FLOW117", (t) => {
  expectDiagnostics(t, "workflow W\nentity V { s: string @⟦pattern⟧(\"x\") }\ninitial state S\nterminal state T\n", [Codes.UnknownAnnotation]);
});

test("@maxLength/@minLength: string fields, non-negative int literal, once, min ≤ max (FLOW118)", (t) => {
  expectDiagnostics(
    t,
    `workflow W
entity V {
  a: int ⟦@maxLength(3)⟧
  b: string @maxLength(⟦-1⟧)
  c: string? @minLength(⟦2.5⟧)
  d: string @maxLength(⟦"x"⟧)
  e: string @maxLength(3) ⟦@maxLength(4)⟧
  ⟦f⟧: string @minLength(5) @maxLength(4)
  g: string? @minLength(0) @maxLength(400)
}
initial state S
terminal state T`,
    [Codes.InvalidAnnotation, Codes.InvalidAnnotation, Codes.InvalidAnnotation, Codes.InvalidAnnotation, Codes.InvalidAnnotation, Codes.InvalidAnnotation],
  );
});

test("annotation limits reach the compiled form", (t) => {
  const r = expectClean(t, "workflow W\nentity V { s: string? @maxLength(400) @minLength(1) }\ninitial state S\nterminal state T\n");
  t.deepEqual(r.workflow!.entities.V.fields.s, { type: { kind: "string", optional: true }, maxLength: 400, minLength: 1 });
});

// --- names ------------------------------------------------------------------------------------------------

test("an unknown name is FLOW105", (t) => {
  expectDiagnostics(t, inEnter("    let x = ⟦nope⟧ + 1"), [Codes.UnknownName]);
});

test("an unknown member is FLOW106 at the member name", (t) => {
  expectDiagnostics(t, inEnter("    let x = v.⟦nope⟧\n    let y = n.⟦size⟧"), [Codes.UnknownMember, Codes.UnknownMember]);
});

test("a let may not hide a visible name (FLOW119)", (t) => {
  expectDiagnostics(t, inEnter("    let x = 1\n    if (x > 0) { let ⟦x⟧ = 2 }\n    let ⟦n⟧ = 3"), [Codes.Shadowing, Codes.Shadowing]);
});

test("a call to an unknown function is FLOW120", (t) => {
  expectDiagnostics(t, inEnter("    let x = ⟦length⟧(names)"), [Codes.UnknownFunction]);
});

test("calling a value is FLOW121", (t) => {
  expectDiagnostics(t, inEnter("    let x = ⟦n⟧(1)\n    let y = v.⟦s⟧(1)"), [Codes.NotCallable, Codes.NotCallable]);
});
