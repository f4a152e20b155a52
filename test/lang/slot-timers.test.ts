/**
 * Issue 43 item 3 in the compiler (language reference "Timers on a slot, per element"): `after D
 * { … }` and `every P [after D] { … }` inside a `subscribe` or `call` block parse, type-check in
 * the scope of `each` (the fan-out variable, the alias standing for the element's slot, so
 * `x.CallbackUrl()` is allowed there), compile to `CompiledSlot.timers`, and format.
 */
import test from "ava";
import { Codes } from "../../src/lang/codes.js";
import { format } from "../../src/authoring/format.js";
import { expectClean, expectDiagnostics } from "./helpers.js";

const wrap = (state: string, params = "v: V, directors: list<string>, k: int") => `workflow W(${params})
entity V { url: string?; n: int? }
event Sign(agree: bool)
initial state S {
${state}
}
terminal state T`;

const signing = wrap(`  subscribe Sign(agree) as signoff for each d in directors {
    Quorum: 2
    each { send email to d { subject: "Please sign", body: signoff.CallbackUrl() } }
    every 2d { send email to d { subject: "Reminder: please sign", body: signoff.CallbackUrl() } }
    every 1d after 3d { v.n = signoff.count }
    after 10d -> T
  }
  on signoff(agree) { when (signoff.done) -> T }`);

test("timers on a fanned-out slot compile per slot, with the element's link allowed in them", (t) => {
  const r = expectClean(t, signing);
  const slot = r.workflow!.states.S.slots[0];
  t.deepEqual(slot.timers!.map((x) => [x.index, x.every, x.schedule, x.first !== null, x.handler.arms.length]), [
    [0, true, "every 2d", false, 0],
    [1, true, "every 1d after 3d", true, 0],
    [2, false, "after 10d", false, 1],
  ]);
  t.is(r.workflow!.states.S.timers, undefined);
  t.truthy(slot.each);
});

test("a timer on a single slot and on a call compile too", (t) => {
  const r = expectClean(
    t,
    wrap(`  subscribe Sign(agree) as one { after 1d { v.url = one.CallbackUrl() } }
  call http "crm" as c { every 1h { v.n = 1 } }
  on one(agree) -> T
  on c() -> T`),
  );
  t.is(r.workflow!.states.S.slots[0].timers!.length, 1);
  t.is(r.workflow!.states.S.slots[1].timers![0].schedule, "every 1h");
});

test("in a slot timer another fanned-out alias is still FLOW310; the durations are durations (FLOW340, FLOW341)", (t) => {
  expectDiagnostics(
    t,
    wrap(`  subscribe Sign(agree) as a for each s in directors {
    every ⟦"2d"⟧ { v.url = ⟦b.CallbackUrl()⟧ }
    every ⟦30s⟧ { v.url = s }
  }
  subscribe Sign(agree) as b for each s in directors`),
    [Codes.TimerType, Codes.CallbackUrlFanOut, Codes.TimerPeriodTooShort],
  );
});

test("the fan-out variable is in scope in a slot timer, and unknown names are not", (t) => {
  expectDiagnostics(t, wrap(`  subscribe Sign(agree) as sig for each s in directors { after 1d { v.url = s + ⟦nope⟧ } }`), [Codes.UnknownName]);
});

test("after and every stay setting words only before a duration: 'after: x' is still an unknown setting", (t) => {
  expectDiagnostics(t, wrap(`  subscribe Sign(agree) as sig { ⟦after⟧: 1d }`), [Codes.UnknownSetting]);
});

test("the formatter lays out a slot timer like a state's", (t) => {
  const messy = wrap(`  subscribe Sign(agree) as sig for each s in directors {
      every   2d   after 1d {
 send email to s { subject: "x", body: sig.CallbackUrl() }
      }
  }`);
  const out = format(messy);
  t.true(out.ok);
  if (out.ok) t.true(out.text.includes(`    every 2d after 1d {\n      send email to s { subject: "x", body: sig.CallbackUrl() }\n    }\n`), out.text);
});
