/**
 * Language variants of the author's texts (v0.5, issue 42; docs/language.md "Languages of the
 * responder"): `Title`, `Intro` and the wording after `Requires … else` take `, de: …` variants
 * (keys: a bare word or a quoted BCP 47 tag), `Language: expr` names the responder's language.
 * Parsed, checked (FLOW390 unknown or repeated tag, FLOW391 uneven coverage — a warning, FLOW392
 * Language not a string, FLOW038 variants on another setting), compiled by canonical tag, and laid
 * out by `slotflow fmt` without changing their meaning.
 */
import test from "ava";
import { format, stripRanges } from "../../src/authoring/format.js";
import { Codes } from "../../src/lang/codes.js";
import { compile } from "../../src/lang/compile.js";
import { expectClean, expectDiagnostics, inState } from "./helpers.js";

const slotOf = (source: string, alias = "x") => compile(source, "test.flow").workflow!.states.S!.slots.find((s) => s.alias === alias)!;

test("variants compile by canonical tag next to the default wording; Language compiles; Candidates still lists expressions", (t) => {
  const source = inState(`  subscribe E(a, b) as x {
    Title: "Approve " + v.s + "?", de: v.s + " freigeben?", "pt-br": "Aprovar " + v.s + "?"
    Intro: "Please check.", de: "Bitte prüfen.", "pt-BR": "Verifique."
    Requires: a <= n else "at most " + n, de: "höchstens " + n, "pt-BR": "no máximo " + n
    Language: v.s
    Candidates: role("a"), role("b")
  }
  on x(a, b) -> T`);
  const r = expectClean(t, source);
  t.deepEqual(r.diagnostics.filter((d) => d.code === Codes.UnevenLanguageCoverage), []);
  const slot = slotOf(source);
  t.deepEqual(Object.keys(slot.titles ?? {}), ["de", "pt-BR"]);
  t.deepEqual(Object.keys(slot.intros ?? {}), ["de", "pt-BR"]);
  t.deepEqual(Object.keys(slot.requiresWordings ?? {}), ["de", "pt-BR"]);
  t.is(slot.title?.kind, "binary");
  t.is(slot.language?.kind, "member");
  t.is(slot.candidates?.length, 2);
});

test("a slot without variants compiles as before (no variant keys)", (t) => {
  const source = inState(`  subscribe E(a, b) as x { Title: "Plain" }
  on x(a, b) -> T`);
  expectClean(t, source);
  const slot = slotOf(source);
  t.false("titles" in slot);
  t.false("intros" in slot);
  t.false("language" in slot);
});

test("an unknown or repeated tag is FLOW390; a variant that is not text is FLOW201 (a type mismatch) like its default; Language must be a string (FLOW392)", (t) => {
  expectDiagnostics(
    t,
    inState(`  subscribe E(a, b) as x {
    Title: "A", ⟦"not a tag!"⟧: "B", de: "C", ⟦de⟧: "D"
    Intro: "A", de: ⟦n⟧
    Language: ⟦n⟧
  }
  on x(a, b) -> T`),
    [Codes.UnknownLanguageTag, Codes.UnknownLanguageTag, Codes.TypeMismatch, Codes.LanguageType],
  );
  expectDiagnostics(
    t,
    inState(`  subscribe E(a, b) as x { Language: ⟦"x_y"⟧ }
  on x(a, b) -> T`),
    [Codes.UnknownLanguageTag],
  );
});

test("uneven coverage across a slot's texts is a warning (FLOW391) naming what is missing", (t) => {
  const r = expectDiagnostics(
    t,
    inState(`  subscribe E(a, b) as x {
    Title: "A", de: "B", ja: "C"
    ⟦Intro: "A", de: "B"⟧
  }
  on x(a, b) -> T`),
    [Codes.UnevenLanguageCoverage],
  );
  t.regex(r.diagnostics.find((d) => d.code === Codes.UnevenLanguageCoverage && /Intro/.test(d.message))!.message, /Intro has no ja variant/);
  t.true(r.diagnostics.every((d) => d.severity === "warning"));
});

test("variants belong to Title, Intro and Requires' else only (FLOW038)", (t) => {
  expectDiagnostics(
    t,
    inState(`  subscribe E(a, b) as x {
    Deadline: 1d, ⟦de: 2d⟧
    Requires: a > 0, ⟦de: a > 1⟧
  }
  on x(a, b) -> T`),
    [Codes.VariantOutsideText, Codes.VariantOutsideText],
  );
});

test("slotflow fmt lays variants out without changing their meaning", (t) => {
  const messy = inState(`  subscribe E(a, b) as x {
    Title:"A" ,de :  "B",   "pt-BR":"C"
  }
  on x(a, b) -> T`);
  const r = format(messy);
  t.true(r.ok, JSON.stringify(r));
  if (!r.ok) return;
  t.true(r.text.includes(`Title: "A", de: "B", "pt-BR": "C"`), r.text);
  t.deepEqual(stripRanges(compile(r.text).workflow), stripRanges(compile(messy).workflow));
});

test("@label and @help take named language arguments, compiled by canonical tag; a bad tag is FLOW390", (t) => {
  const source = inState(`  subscribe E(a, b) as x { Title: "T" }
  on x(a, b) -> T`, `event H(ok: bool @label("Do you approve?", de: "Stimmen Sie zu?", "pt-br": "Aprova?") @help("Say yes or no.", ja: "はいかいいえ。"))`);
  const r = expectClean(t, source);
  const ok = r.workflow!.events.H!.params[0]!;
  t.deepEqual(ok.page, { label: "Do you approve?", labels: { de: "Stimmen Sie zu?", "pt-BR": "Aprova?" }, help: "Say yes or no.", helps: { ja: "はいかいいえ。" } });
  expectDiagnostics(
    t,
    inState(`  subscribe E(a, b) as x { Title: "T" }
  on x(a, b) -> T`, `event H(ok: bool @label("Yes?", ⟦"!!"⟧: "Ja?"))`),
    [Codes.UnknownLanguageTag],
  );
});

test("examples/vendor-approval-de.flow checks clean, is formatted, and compiles its German variants", async (t) => {
  const { readFileSync } = await import("node:fs");
  const source = readFileSync("examples/vendor-approval-de.flow", "utf8");
  const r = compile(source, "vendor-approval-de.flow");
  t.deepEqual(r.diagnostics.map((d) => `${d.code} ${d.message}`), []);
  const f = format(source);
  t.true(f.ok && f.text === source, "slotflow fmt --check passes");
  const slot = r.workflow!.states.AwaitingVendor!.slots[0]!;
  t.deepEqual(Object.keys(slot.titles ?? {}), ["de"]);
  t.deepEqual(Object.keys(slot.requiresWordings ?? {}), ["de"]);
  t.is(r.workflow!.events.Decision!.params[0]!.page?.labels?.de, "Geben Sie diese Bestellung frei?");
});
