/**
 * The checks of language variants (v0.5, issue 42; docs/language.md "Languages of the responder";
 * docs/languages.md): each variant's key must be a BCP 47 tag (`Intl.getCanonicalLocales` accepts
 * it; FLOW390, also for a tag given twice for one text), and the texts of one slot should be
 * translated into the same languages (FLOW391, a warning naming what is missing where).
 * The variants' expressions are type-checked by the caller like the default wording.
 */
import type { LangVariant, Setting } from "./ast.js";
import { Codes } from "./codes.js";
import type { Reporter } from "./info.js";

/** A variant key as its canonical BCP 47 tag (`pt-br` → `pt-BR`), or null when it is not a tag. */
export function canonicalTag(tag: string): string | null {
  if (tag.length === 0 || tag.length > 64) return null;
  try {
    return Intl.getCanonicalLocales(tag)[0] ?? null;
  } catch {
    return null;
  }
}

/** FLOW390 for each variant whose key is not a tag or repeats one of the same text. */
export function checkVariantTags(report: Reporter, variants: readonly LangVariant[] | undefined): void {
  const seen = new Set<string>();
  for (const v of variants ?? []) {
    const tag = canonicalTag(v.tag);
    if (tag === null) {
      report.error(Codes.UnknownLanguageTag, `'${v.tag}' is not a language tag (BCP 47): write a language such as de, ja or ar, quoted with a region or script ("pt-BR", "zh-Hant")`, v.range);
    } else if (seen.has(tag)) {
      report.error(Codes.UnknownLanguageTag, `the variant for '${tag}' is given twice for this text`, v.range);
    } else seen.add(tag);
  }
}

const TEXT_NAMES: Record<string, string> = { title: "Title", intro: "Intro", requires: "Requires … else" };

/** FLOW391 (a warning) when the slot's texts with variants do not all cover the same languages. */
export function checkCoverage(report: Reporter, settings: readonly Setting[]): void {
  const texts = settings.flatMap((s) =>
    (s.kind === "title" || s.kind === "intro" || s.kind === "requires") && s.variants?.length
      ? [{ name: TEXT_NAMES[s.kind]!, setting: s, tags: new Set(s.variants.map((v) => canonicalTag(v.tag)).filter((t): t is string => t !== null)) }]
      : [],
  );
  // a Title or Intro without variants next to one with them is uneven too
  for (const s of settings) {
    if ((s.kind === "title" || s.kind === "intro") && !s.variants?.length && texts.length > 0) texts.push({ name: TEXT_NAMES[s.kind]!, setting: s, tags: new Set() });
  }
  if (texts.length < 2) return;
  const all = new Set(texts.flatMap((x) => [...x.tags]));
  for (const x of texts) {
    const missing = [...all].filter((tag) => !x.tags.has(tag)).sort();
    if (missing.length > 0) {
      report.warning(
        Codes.UnevenLanguageCoverage,
        `${x.name} has no ${missing.join(", ")} variant while other texts of this slot do: readers of ${missing.join(", ")} would see it in the default wording`,
        x.setting.range,
      );
    }
  }
}
