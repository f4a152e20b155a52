/**
 * `Forwardable: expr` (docs/language.md "Slot settings"; v0.4 "Many responders, forwarding, and
 * receipts"): a bool over the workflow parameters and the fan-out variable, compiled as the slot's
 * `forwardable` (absent by default), laid out by `slotflow fmt` without changing its meaning.
 */
import test from "ava";
import { format } from "../../src/authoring/format.js";
import { Codes } from "../../src/lang/codes.js";
import { compile } from "../../src/lang/compile.js";
import { expectClean, expectDiagnostics, inState } from "./helpers.js";

const slotOf = (source: string, alias = "x") => compile(source, "test.flow").workflow!.states.S!.slots.find((s) => s.alias === alias)!;

test("Forwardable: true compiles to the slot's forwardable expression; without it the key is absent", (t) => {
  const source = inState(`  subscribe E(a, b) as x { Forwardable: true }
  subscribe E(a, b) as y { Deadline: 1d }
  on x(a, b) -> T
  on y(a, b) -> T`);
  expectClean(t, source);
  t.like(slotOf(source).forwardable, { kind: "literal", type: "bool", value: true });
  t.false("forwardable" in slotOf(source, "y"));
});

test("Forwardable reads workflow parameters and the fan-out variable", (t) => {
  const source = inState(`  subscribe E(a, b) as x for each who in names { Forwardable: n > 2 && who != v.s }
  on x(a, b) -> T`);
  expectClean(t, source);
  t.is(slotOf(source).forwardable?.kind, "binary");
});

test("Forwardable must be a bool (FLOW202), is given once (FLOW303), takes one expression and no else", (t) => {
  expectDiagnostics(t, inState(`  subscribe E(a, b) as x { Forwardable: ⟦"yes"⟧ }\n  on x(a, b) -> T`), [Codes.ConditionNotBool]);
  expectDiagnostics(t, inState(`  subscribe E(a, b) as x {\n    Forwardable: true\n    ⟦Forwardable: false⟧\n  }\n  on x(a, b) -> T`), [Codes.DuplicateSetting]);
  expectDiagnostics(t, inState(`  subscribe E(a, b) as x { Forwardable: true, ⟦false⟧ }\n  on x(a, b) -> T`), [Codes.SettingArity]);
});

test("the event's parameters are not in scope of Forwardable (nothing has been answered yet)", (t) => {
  expectDiagnostics(t, inState(`  subscribe E(a, b) as x { Forwardable: ⟦a⟧ > 1 }\n  on x(a, b) -> T`), [Codes.UnknownName]);
});

test("slotflow fmt lays Forwardable out like any setting", (t) => {
  const r = format(inState(`  subscribe E(a, b) as x {   Forwardable:true
  Deadline:   1d }\n  on x(a, b) -> T`));
  if (!r.ok) return t.fail(r.reason);
  t.regex(r.text, /\{ Forwardable: true\n\s+Deadline: 1d \}/);
  const again = format(r.text);
  t.true(again.ok && again.text === r.text, "formatting is stable");
});
