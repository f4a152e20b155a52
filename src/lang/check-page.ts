/**
 * What an author may say about the responder page (docs/language.md, "The responder page";
 * issue 10 §1 "Authors can word the page"), checked beside the declarations it annotates:
 *
 * - on an event parameter, `@label("…")` (the control's label), `@help("…")` (a line of help under
 *   it) and `@multiline` (a `string`/`string?` parameter gets a text area): each at most once,
 *   `@label`/`@help` with a non-empty string literal, `@multiline` with no argument. Anything else
 *   is FLOW117; a misused one FLOW118. Workflow parameters and `map event` parameters take none
 *   (FLOW117).
 * - on a `subscribe`, the settings `Title: expr` and `Intro: expr` (a `string` or `string?`,
 *   FLOW200 otherwise), in the scope of `Deadline`; they are evaluated read-only when the page is
 *   shown (a `null` falls back to the default wording). Typed in check-states.ts.
 *
 * - on an event parameter, the constraints (v0.5, issue 43) `@min`, `@max`, `@minLength`,
 *   `@maxLength`, `@pattern`, `@email`, `@oneOf`: checked in check-constraints.ts.
 *
 * None of this changes what a deploy compares (names and types); constraints are kept with each
 * version, and a link is held to the rules of the version that minted it.
 */
import type { Param } from "./ast.js";
import { Codes } from "./codes.js";
import type { ParamPage, ParamRules } from "./compiled.js";
import { checkConstraint, checkRuleBounds, CONSTRAINT_NAMES } from "./check-constraints.js";
import { canonicalTag, checkVariantTags } from "./check-languages.js";
import type { Reporter } from "./info.js";
import { showType, type Ty } from "./types.js";

const PAGE_ANNOTATIONS =
  "the annotations of an event parameter are @label(\"…\"), @help(\"…\"), @multiline and the constraints @min, @max, @minLength, @maxLength, @pattern, @email, @oneOf";

/**
 * Checks the annotations of one parameter. `eventParam` is false for workflow and `map event`
 * parameters, which take none. Returns the page wording and the constraints (v0.5, issue 43;
 * check-constraints.ts), each undefined when there is none.
 */
export function checkParamAnnotations(report: Reporter, p: Param, type: Ty, eventParam: boolean): { page?: ParamPage; rules?: ParamRules } {
  const page: ParamPage = {};
  const rules: ParamRules = {};
  for (const a of p.annotations) {
    const name = a.name.name;
    if (!eventParam) {
      report.error(Codes.UnknownAnnotation, `'@${name}': only event parameters take annotations (${PAGE_ANNOTATIONS})`, a.name.range);
      continue;
    }
    if (CONSTRAINT_NAMES.has(name)) {
      checkConstraint(report, p, type, a, rules);
      continue;
    }
    if (name !== "label" && name !== "help" && name !== "multiline") {
      report.error(Codes.UnknownAnnotation, `unknown annotation '@${name}': ${PAGE_ANNOTATIONS}`, a.name.range);
      continue;
    }
    if (page[name] !== undefined) {
      report.error(Codes.InvalidAnnotation, `@${name} is given twice`, a.range);
      continue;
    }
    if (name === "multiline") {
      if (a.value !== null) {
        report.error(Codes.InvalidAnnotation, "@multiline takes no argument", a.value.range);
        continue;
      }
      if (type.kind !== "string" && type.kind !== "error") {
        report.error(Codes.InvalidAnnotation, `@multiline applies to string parameters; '${p.name.name}' is ${showType(type)}`, a.range);
        continue;
      }
      page.multiline = true;
      continue;
    }
    // v0.5 (issue 42): named language arguments of @label/@help, by canonical tag (FLOW390 for a bad or repeated tag)
    if (a.variants?.length) {
      checkVariantTags(report, a.variants.map((v) => ({ tag: v.tag, range: v.range, expr: v.value })));
      const byTag: Record<string, string> = {};
      for (const v of a.variants) {
        const tag = canonicalTag(v.tag);
        if (v.value.type !== "string" || v.value.value.trim() === "") {
          report.error(Codes.InvalidAnnotation, `@${name}'s ${v.tag} wording must be a non-empty string`, v.value.range);
        } else if (tag) byTag[tag] = v.value.value;
      }
      if (Object.keys(byTag).length > 0) page[name === "label" ? "labels" : "helps"] = byTag;
    }
    if (a.value === null || a.value.type !== "string" || a.value.value.trim() === "") {
      report.error(Codes.InvalidAnnotation, `@${name} takes a non-empty string, such as @${name}("…")`, a.value?.range ?? a.range);
      continue;
    }
    page[name] = a.value.value;
  }
  checkRuleBounds(report, p, rules);
  return { ...(Object.keys(page).length > 0 ? { page } : {}), ...(Object.keys(rules).length > 0 ? { rules } : {}) };
}

/** FLOW200 unless `t` is a `string` or `string?` (the type of `Title` and `Intro`). */
export function checkPageText(report: Reporter, setting: "Title" | "Intro", t: Ty, range: Param["range"]): void {
  if (t.kind !== "string" && t.kind !== "error" && t.kind !== "null") {
    report.error(Codes.TypeMismatch, `${setting} is text shown on the responder page: it must be a string, found ${showType(t)}`, range);
  }
}
