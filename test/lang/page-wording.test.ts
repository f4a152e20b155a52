/**
 * The responder page's wording in the language (docs/language.md "The responder page"; issue 10
 * §1 "Authors can word the page"): `@label`, `@help`, `@multiline` on event parameters and the
 * `Title` / `Intro` settings of a `subscribe` — what is accepted, what each misuse reports, and
 * what reaches the compiled form. Diagnostics are asserted by code and range only.
 */
import test from "ava";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { compile } from "../../src/lang/compile.js";
import { Codes } from "../../src/lang/codes.js";
import { expectClean, expectDiagnostics } from "./helpers.js";

const WORDED = `workflow W(v: V)
entity V { name: string; amount: int }
event Approve(
  ok: bool @label("Do you approve?") @help("Yes completes the order."),
  note: string? @label("Note") @multiline,
  qty: int
)
initial state S {
  subscribe Approve(ok, note, qty) as decision {
    Title: "Approve " + v.name + "?"
    Intro: "The amount is " + v.amount + " EUR."
  }
  on decision(ok, note, qty) -> T
}
terminal state T
`;

test("labels, help, @multiline, Title and Intro compile into the event and the slot", (t) => {
  const r = expectClean(t, WORDED);
  const params = r.workflow!.events.Approve.params;
  t.deepEqual(params[0], { name: "ok", type: { kind: "bool", optional: false }, page: { label: "Do you approve?", help: "Yes completes the order." } });
  t.deepEqual(params[1], { name: "note", type: { kind: "string", optional: true }, page: { label: "Note", multiline: true } });
  t.deepEqual(params[2], { name: "qty", type: { kind: "int", optional: false } }, "no wording: no page key");
  const slot = r.workflow!.states.S.slots[0];
  t.is(slot.title?.kind, "binary");
  t.is(slot.intro?.kind, "binary");
});

test("a slot without Title or Intro has neither key in its compiled form", (t) => {
  const r = expectClean(t, "workflow W\nevent E()\ninitial state S {\n  subscribe E() as e\n  on e() -> T\n}\nterminal state T\n");
  t.false("title" in r.workflow!.states.S.slots[0]);
  t.false("intro" in r.workflow!.states.S.slots[0]);
});

test("an unknown annotation on an event parameter is FLOW117", (t) => {
  expectDiagnostics(t, "workflow W\nevent E(a: string @⟦placeholder⟧(\"x\"))\ninitial state S\nterminal state T\n", [Codes.UnknownAnnotation]);
});

test("workflow and map event parameters take no annotations (FLOW117)", (t) => {
  expectDiagnostics(
    t,
    `workflow W(n: int @⟦label⟧("N"))
event E(a: string)
map event E(a: int @⟦help⟧("h")) to E(a: "" + a)
initial state S
terminal state T`,
    [Codes.UnknownAnnotation, Codes.UnknownAnnotation],
  );
});

test("misused page annotations are FLOW118: twice, empty or non-string text, @multiline with an argument or on a non-string", (t) => {
  expectDiagnostics(
    t,
    `workflow W
event E(
  a: string @label("A") ⟦@label("B")⟧,
  b: string @label(⟦""⟧),
  c: string @help(⟦3⟧),
  d: string ⟦@label⟧,
  e: string @multiline(⟦true⟧),
  f: int ⟦@multiline⟧,
  g: string? @multiline
)
initial state S
terminal state T`,
    Array(6).fill(Codes.InvalidAnnotation),
  );
});

test("Title and Intro must be text: string or string? (FLOW200)", (t) => {
  expectDiagnostics(
    t,
    `workflow W(n: int, s: string?)
event E()
initial state S {
  subscribe E() as e {
    Title: ⟦n⟧
    Intro: s
  }
  on e() -> T
}
terminal state T`,
    [Codes.TypeMismatch],
  );
});

test("Title takes one expression (FLOW022)", (t) => {
  expectDiagnostics(t, `workflow W(s: string)\nevent E()\ninitial state S {\n  subscribe E() as e { Title: s, ⟦s⟧ }\n  on e() -> T\n}\nterminal state T`, [Codes.SettingArity]);
});

test("Title and Intro see the workflow parameters but not the event's parameters (FLOW105) or slot aliases (FLOW309)", (t) => {
  expectDiagnostics(
    t,
    `workflow W(n: int)
event E(ok: bool)
initial state S {
  subscribe E(ok) as e {
    Title: "" + ⟦ok⟧
    Intro: "" + ⟦e⟧.done
  }
  on e(ok) -> T
}
terminal state T`,
    [Codes.UnknownName, Codes.AliasNotInScope],
  );
});

test("an entity field's @maxLength without an argument is FLOW118", (t) => {
  expectDiagnostics(t, "workflow W\nentity V { s: string ⟦@maxLength⟧ }\ninitial state S\nterminal state T\n", [Codes.InvalidAnnotation]);
});

test("every example uses the page wording and compiles without errors", (t) => {
  for (const file of readdirSync("examples").filter((f) => f.endsWith(".flow"))) {
    const source = readFileSync(join("examples", file), "utf8");
    const r = compile(source);
    t.deepEqual(r.diagnostics.filter((d) => d.severity === "error"), [], file);
    t.regex(source, /@label\("/, `${file} labels its event parameters`);
    t.regex(source, /^\s*Title:/m, `${file} titles a linked slot`);
    t.regex(source, /open this link to answer/i, `${file}'s email says how to answer`);
  }
});
