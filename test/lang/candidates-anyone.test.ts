/**
 * Who may answer a slot without Candidates (issue 38 M2; docs/language.md "Who may answer"): the
 * compiler marks every form it emits link-only for slots without Candidates
 * (`withoutCandidates: "link-only"`); `anyone()` is a Candidates matcher admitting any signed-in
 * principal; a slot with `anyone()` that also mints a link is a FLOW319 warning (two doors for two
 * audiences); `anyone()` elsewhere, or with arguments, is an error.
 */
import test from "ava";
import { Codes } from "../../src/lang/codes.js";
import { slotAccess } from "../../src/lang/slot-access.js";
import { expectClean, expectDiagnostics, inEnter, inState } from "./helpers.js";

test("every compiled form says a slot without Candidates is link-only; one with them is decided by them", (t) => {
  const r = expectClean(t, inState("  subscribe G() as g\n  subscribe G() as h {\n    Candidates: anyone()\n  }"));
  t.is(r.workflow!.withoutCandidates, "link-only");
  const [g, h] = r.workflow!.states.S!.slots;
  t.is(slotAccess(r.workflow!, g!), "link-only");
  t.is(slotAccess(r.workflow!, h!), "candidates");
  // a form compiled before v0.5 has no such key: the v0.4 meaning (any signed-in principal)
  const { withoutCandidates: _, ...old } = r.workflow!;
  t.is(slotAccess(old as { withoutCandidates?: "link-only" }, g!), "anyone");
});

test("Candidates: anyone() checks clean, alone or beside role()/user(), with no warning when no link is minted", (t) => {
  const r = expectClean(t, inState('  subscribe G() as g {\n    Candidates: anyone(), role("x")\n    Title: "g"\n  }'));
  t.deepEqual(r.diagnostics.filter((d) => d.code !== Codes.UnreachableState), []);
});

test("a slot with Candidates: anyone() that also mints a link is a FLOW319 warning at the CallbackUrl() call", (t) => {
  const r = expectDiagnostics(t, inEnter("    v.o = ⟦g.CallbackUrl()⟧", "  subscribe G() as g {\n    Candidates: anyone()\n    Title: \"g\"\n  }"), [Codes.CallbackUrlAnyone]);
  t.is(r.diagnostics.find((d) => d.code === Codes.CallbackUrlAnyone)!.severity, "warning");
  t.is(Codes.CallbackUrlAnyone, "FLOW319");
  t.truthy(r.workflow, "a warning: the workflow compiles");
});

test("a link for a slot with role() Candidates, or none, is no FLOW319; TaskUrl() of an anyone() slot neither", (t) => {
  expectDiagnostics(t, inEnter("    v.o = g.CallbackUrl()", '  subscribe G() as g {\n    Candidates: role("x")\n    Title: "g"\n  }'), []);
  expectDiagnostics(t, inEnter("    v.o = g.CallbackUrl()", "  subscribe G() as g"), []);
  expectDiagnostics(t, inEnter("    v.o = g.TaskUrl()", "  subscribe G() as g {\n    Candidates: anyone()\n    Title: \"g\"\n  }"), []);
});

test("anyone() outside Candidates is FLOW305; with an argument, FLOW206", (t) => {
  expectDiagnostics(t, inEnter("    let m = ⟦anyone()⟧"), [Codes.MatcherOutsideCandidates]);
  expectDiagnostics(t, inState('  subscribe G() as g {\n    Candidates: ⟦anyone("x")⟧\n    Title: "g"\n  }'), [Codes.ArgumentCount]);
});
