/**
 * The compiler side of many responders (v0.4; docs/language.md "Many responders"): `each { … }`
 * and `Quorum: k` only on a fanned-out slot (FLOW355), `x.CallbackUrl()` / `x.TaskUrl()` per
 * element inside `each` only (FLOW310 elsewhere), `x.count` an int, `x.TaskUrl()` a string allowed
 * in x's own handler, and what the compiled form keeps.
 */
import test from "ava";
import { compile } from "../../src/lang/compile.js";
import { Codes } from "../../src/lang/codes.js";
import { format } from "../../src/authoring/format.js";
import { expectClean, expectDiagnostics } from "./helpers.js";

const wrap = (state: string, params = "v: V, signers: list<string>, k: int") => `workflow W(${params})
entity V { url: string?; n: int? }
event Sign(agree: bool)
initial state S {
${state}
}
terminal state T`;

const signing = wrap(`  subscribe Sign(agree) as signatures for each s in signers {
    Deadline: 14d
    Quorum: 2
    each {
      send email to s { subject: "Please sign", body: signatures.CallbackUrl() + " or " + signatures.TaskUrl() }
    }
  }
  on signatures(agree) {
    v.n = signatures.count
    when (!agree) -> T
    when (signatures.done) -> T
  }`);

test("each { … } with CallbackUrl()/TaskUrl() per element, Quorum: 2 and x.count compile clean", (t) => {
  const r = expectClean(t, signing);
  const slot = r.workflow!.states.S.slots[0];
  t.is(slot.quorum?.kind, "literal");
  t.is(slot.each?.length, 1);
  t.is(slot.each?.[0].kind, "sendEmail");
});

test("Quorum takes any int expression; a non-int is FLOW200", (t) => {
  expectClean(t, wrap(`  subscribe Sign(agree) as sig for each s in signers { Quorum: len(signers) - k }`));
  expectDiagnostics(t, wrap(`  subscribe Sign(agree) as sig for each s in signers { Quorum: ⟦"two"⟧ }`), [Codes.TypeMismatch]);
  expectDiagnostics(t, wrap(`  subscribe Sign(agree) as sig for each s in signers { Quorum: ⟦k⟧ }`, "v: V, signers: list<string>, k: int?"), [Codes.TypeMismatch]);
});

test("Quorum reads the workflow's input only: a tracked row is FLOW356, the fan-out variable is not in scope", (t) => {
  expectDiagnostics(t, wrap(`  subscribe Sign(agree) as sig for each s in signers { Quorum: (⟦v⟧.n ?? 1) + 1 }`), [Codes.QuorumReadsTrackedRow]);
  expectDiagnostics(t, wrap(`  subscribe Sign(agree) as sig for each s in signers { Quorum: len(⟦s⟧) }`), [Codes.UnknownName]);
});

test("Quorum and each on a slot that is not fanned out are FLOW355", (t) => {
  expectDiagnostics(
    t,
    wrap(`  subscribe Sign(agree) as one {
    ⟦Quorum: 1⟧
    ⟦each⟧ { send email to "a@example.com" { subject: "x", body: "y" } }
  }`),
    [Codes.FanOutSettingOnSingleSlot, Codes.FanOutSettingOnSingleSlot],
  );
});

test("outside each, CallbackUrl() and TaskUrl() on a fanned-out slot stay FLOW310", (t) => {
  expectDiagnostics(
    t,
    wrap(`  subscribe Sign(agree) as sig for each s in signers { each { v.url = sig.TaskUrl() } }
  enter {
    v.url = ⟦sig.CallbackUrl()⟧
    v.url = ⟦sig.TaskUrl()⟧
  }`),
    [Codes.CallbackUrlFanOut, Codes.CallbackUrlFanOut],
  );
});

test("inside each, another fanned-out alias is still FLOW310; a single slot's link is allowed", (t) => {
  expectDiagnostics(
    t,
    wrap(`  subscribe Sign(agree) as a for each s in signers { each { v.url = ⟦b.CallbackUrl()⟧; v.url = one.CallbackUrl() } }
  subscribe Sign(agree) as b for each s in signers
  subscribe Sign(agree) as one`),
    [Codes.CallbackUrlFanOut],
  );
});

test("the fan-out variable is in scope inside each, and unknown names are not", (t) => {
  expectDiagnostics(
    t,
    wrap(`  subscribe Sign(agree) as sig for each s in signers { each { v.url = s + ⟦nope⟧ } }`),
    [Codes.UnknownName],
  );
});

test("TaskUrl() is a string allowed in the slot's own handler (not a credential); CallbackUrl() there stays FLOW311", (t) => {
  expectDiagnostics(
    t,
    wrap(`  subscribe Sign(agree) as g
  on g(agree) { v.url = g.TaskUrl(); v.url = ⟦g.CallbackUrl()⟧; default -> T }`),
    [Codes.CallbackUrlInOwnHandler],
  );
  expectDiagnostics(t, wrap(`  subscribe Sign(agree) as g\n  enter { v.n = ⟦g.TaskUrl()⟧ }`), [Codes.TypeMismatch]);
  expectDiagnostics(t, wrap(`  subscribe Sign(agree) as g\n  enter { v.url = ⟦g.TaskUrl⟧ }`), [Codes.SlotNotAValue]);
  expectDiagnostics(t, wrap(`  subscribe Sign(agree) as g\n  enter { v.n = ⟦g.count()⟧ }`), [Codes.NotCallable]);
});

test("each with a value and a value setting with a block are FLOW021; the unknown-setting list names Quorum and each", (t) => {
  const r = compile(wrap(`  subscribe Sign(agree) as sig for each s in signers { each: 1 }`), "t.flow");
  t.deepEqual(r.diagnostics.map((d) => d.code), [Codes.UnknownSetting]);
  const r2 = compile(wrap(`  subscribe Sign(agree) as sig for each s in signers { Quorum { } }`), "t.flow");
  t.deepEqual(r2.diagnostics.map((d) => d.code), [Codes.UnknownSetting]);
  const r3 = compile(wrap(`  subscribe Sign(agree) as sig for each s in signers { Quorom: 2 }`), "t.flow");
  t.regex(r3.diagnostics[0].message, /Quorum, Forwardable, Language and each \{ … \}/);
});

test("the formatter lays out each { … } and Quorum like any block and setting", (t) => {
  const messy = wrap(`  subscribe Sign(agree) as sig for each s in signers {
      Quorum:2
   each {
 send email to s { subject: "x", body: sig.CallbackUrl() }
      }
  }`);
  const out = format(messy);
  t.true(out.ok);
  if (out.ok) {
    t.true(out.text.includes(`    Quorum: 2\n    each {\n      send email to s { subject: "x", body: sig.CallbackUrl() }\n    }\n`), out.text);
  }
});

test("inside each, a minted link left unused is the FLOW313 warning, as for a single slot", (t) => {
  const r = compile(wrap(`  subscribe Sign(agree) as sig for each s in signers { each { sig.CallbackUrl() } }`), "t.flow");
  t.deepEqual(r.diagnostics.filter((d) => d.code !== Codes.UnreachableState).map((d) => [d.code, d.severity]), [[Codes.CallbackUrlDiscarded, "warning"]]);
});
