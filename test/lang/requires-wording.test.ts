/**
 * `Requires: expr else "wording"` (docs/language.md, "Slot settings"; issue 30 item 8): the author
 * words the refusal of a `Requires` that does not hold. Parsed, checked (a string expression over
 * the scope of the condition: run data, the fan-out variable, the event's parameters), compiled
 * beside the condition, and laid out by `slotflow fmt` without changing its meaning.
 */
import test from "ava";
import { format, stripRanges } from "../../src/authoring/format.js";
import { Codes } from "../../src/lang/codes.js";
import { compile } from "../../src/lang/compile.js";
import { expectClean, expectDiagnostics, inState } from "./helpers.js";

const slotOf = (source: string, alias = "x") => compile(source, "test.flow").workflow!.states.S!.slots.find((s) => s.alias === alias)!;

test("`else` gives the wording: it reads run data and the event's parameters; the compiled slot keeps both expressions", (t) => {
  const source = inState(`  subscribe E(a, b) as x {
    Requires: a <= n else "at most " + n + " items, not " + a + " (" + b + ", " + v.s + ")"
  }
  on x(a, b) -> T`);
  expectClean(t, source);
  const slot = slotOf(source);
  t.is(slot.requires?.kind, "binary");
  t.is(slot.requiresWording?.kind, "binary");
});

test("`else` may start the next line, and a slot without it compiles as before (no wording key)", (t) => {
  const source = inState(`  subscribe E(a, b) as x {
    Requires: a <= n
      else "too many"
    Deadline: 1d
  }
  subscribe E(a, b) as y { Requires: a > 0 }
  on x(a, b) -> T
  on y(a, b) -> T`);
  expectClean(t, source);
  t.deepEqual(stripRanges(slotOf(source).requiresWording), { kind: "literal", type: "string", value: "too many", raw: '"too many"' });
  t.false("requiresWording" in slotOf(source, "y"));
});

test("the wording must be a string or string? (FLOW208), and is checked in the scope of the condition (FLOW105)", (t) => {
  const r = expectDiagnostics(
    t,
    inState(`  subscribe E(a, b) as x { Requires: a > 0 else ⟦a⟧ }
  subscribe E(a, b) as y { Requires: a > 0 else v.o }
  subscribe E(a, b) as z { Requires: a > 0 else "no " + ⟦c⟧ }
  on x(a, b) -> T
  on y(a, b) -> T
  on z(a, b) -> T`),
    [Codes.RequiresWordingType, Codes.UnknownName],
  );
  t.regex(r.diagnostics[0].message, /must be a string.*found int/);
});

test("only Requires takes `else` (FLOW027)", (t) => {
  const r = expectDiagnostics(
    t,
    inState(`  subscribe E(a, b) as x {
    Deadline: 1d ⟦else "late"⟧
  }
  on x(a, b) -> T`),
    [Codes.ElseOutsideRequires],
  );
  t.regex(r.diagnostics[0].message, /only Requires/);
});

test("`slotflow fmt` lays the wording out canonically and keeps its meaning", (t) => {
  const messy = inState(`  subscribe E(a, b) as x {
    Requires:a<=n   else"at most "+n
  }
  on x(a, b) -> T`);
  const r = format(messy);
  if (!r.ok) return t.fail(r.reason);
  t.true(r.text.includes(`    Requires: a <= n else "at most " + n\n`), r.text);
  const again = format(r.text);
  t.true(again.ok && !again.changed);
  t.deepEqual(stripRanges(compile(r.text).workflow), stripRanges(compile(messy).workflow));
});
