/**
 * A null check narrows (language reference, "Optional types"): in `p != null && e`, `e` sees `p`
 * without its `?`; in `p == null || e` too; so does the `then` block of `if (p != null …)` unless
 * that block assigns `p`. Where a value may still be null, the error ends with the fix: check it
 * first, or give a fallback with `??`. `p` is a name or a field path (`v.o`).
 * inState's workflow: `v: V` with `o: string?`, `d: decimal?`; `names: list<string>`.
 */
import test from "ava";
import { Codes } from "../../src/lang/codes.js";
import { expectClean, expectDiagnostics, inEnter } from "./helpers.js";

test("`x != null && len(x)` narrows x; `x == null || …` too; conditions chain", (t) => {
  expectClean(
    t,
    inEnter(`    let a = v.o != null && len(v.o) > 3
    let b = v.o == null || upper(v.o) == "X"
    let c = v.o != null && v.d != null && len(v.o) > v.d
    let d = null != v.d && v.d * 2 > 1.5
    let o = v.o
    let e = o != null && contains(names, o)`),
  );
});

test("if (x != null) narrows x in its then block, unless the block assigns x", (t) => {
  expectClean(t, inEnter(`    if (v.o != null && v.d != null) {
      v.s = lower(v.o)
      let twice = v.d * 2
    }`));
  expectDiagnostics(
    t,
    inEnter(`    if (v.o != null) {
      v.o = null
      v.s = ⟦v.o⟧
    } else {
      let n2 = len(⟦v.o⟧)
    }`),
    [Codes.TypeMismatch, Codes.TypeMismatch],
  );
});

test("no narrowing across || or from != on something else; the error ends with the ?? fix", (t) => {
  const r = expectDiagnostics(
    t,
    inEnter(`    let a = v.o != null || len(⟦v.o⟧) > 3
    let b = ⟦v.d * 2⟧
    v.s = ⟦v.o⟧`),
    [Codes.TypeMismatch, Codes.OperatorTypes, Codes.TypeMismatch],
  );
  const errors = r.diagnostics.filter((d) => d.severity === "error");
  for (const d of errors) t.regex(d.message, /\?\?/, d.message);
  t.regex(errors[0].message, /check it first \(`v\.o != null && …`\) or give a fallback with \?\?/);
});
