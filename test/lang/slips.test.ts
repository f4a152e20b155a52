/**
 * Syntax errors for a newcomer's common slips say what is wrong and end with the fix (issue 30
 * item 10): `Deadline: 3 days`, `10_000`, a bare `-> State` in a handler, a parameter named
 * with a reserved word. Each asserts the code, the range and the message's last words.
 */
import test from "ava";
import { Codes } from "../../src/lang/codes.js";
import { expectDiagnostics, inEnter, inState } from "./helpers.js";

const endsWith = (t: import("ava").ExecutionContext, message: string, fix: string) => t.true(message.endsWith(fix), message);

test("`Deadline: 3 days` (a number, a space, a unit word) is FLOW005 ending with the fix `3d`; the rest of the file is still checked", (t) => {
  const r = expectDiagnostics(
    t,
    inState(`  subscribe E(a, b) as x {
    Deadline: ⟦3 days⟧
  }
  subscribe G() as g { Deadline: ⟦2 hours⟧ }
  enter { let w = ⟦1 week⟧; let y = ⟦nope⟧ }
  on x(a, b) -> T
  on g() -> T`),
    [Codes.InvalidNumber, Codes.InvalidNumber, Codes.InvalidNumber, Codes.UnknownName],
  );
  endsWith(t, r.diagnostics[0].message, "a duration is one number and a unit: `3d`");
  endsWith(t, r.diagnostics[1].message, "a duration is one number and a unit: `2h`");
  endsWith(t, r.diagnostics[2].message, "a duration is one number and a unit: `7d`");
});

test("`10_000` is FLOW005 ending with the fix: write digits only", (t) => {
  const r = expectDiagnostics(t, inEnter("    let a = ⟦10_000⟧\n    let b = ⟦1_000_000s⟧"), [Codes.InvalidNumber, Codes.InvalidNumber]);
  endsWith(t, r.diagnostics[0].message, "write digits only: `10000`");
  endsWith(t, r.diagnostics[1].message, "write digits only: `1000000s`");
});

test("a bare `-> State` in a handler is FLOW028 ending with the fix `default -> State`", (t) => {
  const r = expectDiagnostics(
    t,
    inState(`  subscribe E(a, b) as x
  subscribe G() as g
  on x(a, b) {
    let y = a
    ⟦-> T⟧
  }
  on g() {
    ⟦-> T⟧
  }`),
    [Codes.BareArrow, Codes.BareArrow],
  );
  endsWith(t, r.diagnostics[0].message, "a handler moves on with `default -> T`");
  endsWith(t, r.diagnostics[1].message, "a handler moves on with `default -> T`");
});

test("a parameter named with a reserved word (`to`) is FLOW029 ending with the fix, in a declaration and where it is named again", (t) => {
  const r = expectDiagnostics(
    t,
    `workflow W(⟦in⟧: int)
event E(⟦to⟧: string, b: int)
initial state S {
  subscribe E(⟦to⟧, b) as x
  on x(⟦to⟧, b) -> T
}
terminal state T
`,
    [Codes.ReservedName, Codes.ReservedName, Codes.ReservedName, Codes.ReservedName],
  );
  endsWith(t, r.diagnostics[0].message, "`in` is a reserved word; choose another name");
  for (const d of r.diagnostics.slice(1)) endsWith(t, d.message, "`to` is a reserved word; choose another name");
});
