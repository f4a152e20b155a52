/**
 * Constraints on event parameters (v0.5, issue 43; docs/language.md "Constraints on event
 * parameters"), checked beside the page annotations (check-page.ts hands them here):
 *
 * | annotation | applies to | argument |
 * |---|---|---|
 * | `@min(n)`, `@max(n)` | `int` (an integer), `decimal` (a number), `date` (`"YYYY-MM-DD"` or `today`) | one |
 * | `@minLength(n)`, `@maxLength(n)` | `string` | a non-negative integer |
 * | `@pattern("…")` | `string` | a non-empty RE2 pattern (re2js compiles it here: linear-time matching) |
 * | `@email` | `string` | none |
 * | `@oneOf("a", "b", …)` | `string` | one or more distinct non-empty strings (at most MAX_CHOICES) |
 *
 * Optional types (`int?`) take the same rules (a `null` satisfies them); lists take none.
 * Diagnostics: FLOW130 a rule on a type it does not apply to; FLOW131 a bad argument, a rule given
 * twice, a minimum above its maximum; FLOW132 a pattern RE2 cannot compile (a backreference, a
 * look-around…). The rules are compiled into `CompiledParam.rules` and enforced by the engine
 * (engine/values/body.ts) on every door.
 */
import { RE2JS } from "re2js";
import type { Annotation, LiteralExpr, Param } from "./ast.js";
import { Codes } from "./codes.js";
import type { ParamRules } from "./compiled.js";
import type { Reporter } from "./info.js";
import { showType, type Ty } from "./types.js";

/** The names of the constraint annotations. */
export const CONSTRAINT_NAMES: ReadonlySet<string> = new Set(["min", "max", "minLength", "maxLength", "pattern", "email", "oneOf"]);
/** At most this many choices in one `@oneOf`, and this many characters in one `@pattern`. */
export const MAX_CHOICES = 100;
export const MAX_PATTERN_CHARS = 1000;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True for `YYYY-MM-DD` naming a real day of years 0001–9999 (the rule of the `date` type). */
export function isCalendarDate(text: string): boolean {
  const m = DATE.exec(text);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < 1) return false;
  const probe = new Date(0);
  probe.setUTCFullYear(y, mo - 1, d);
  return probe.getUTCFullYear() === y && probe.getUTCMonth() === mo - 1 && probe.getUTCDate() === d;
}

/** Null when RE2 (re2js) compiles `pattern`, else why not. */
export function re2Problem(pattern: string): string | null {
  try {
    RE2JS.compile(pattern);
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : "it cannot be compiled";
  }
}

const APPLIES: Record<string, { kinds: readonly string[]; words: string }> = {
  min: { kinds: ["int", "decimal", "date"], words: "int, decimal and date parameters" },
  max: { kinds: ["int", "decimal", "date"], words: "int, decimal and date parameters" },
  minLength: { kinds: ["string"], words: "string parameters" },
  maxLength: { kinds: ["string"], words: "string parameters" },
  pattern: { kinds: ["string"], words: "string parameters" },
  email: { kinds: ["string"], words: "string parameters" },
  oneOf: { kinds: ["string"], words: "string parameters" },
};

const isNumber = (v: LiteralExpr | null): v is Extract<LiteralExpr, { type: "int" | "decimal" }> => v !== null && (v.type === "int" || v.type === "decimal");

/**
 * Checks one constraint annotation `a` (its name is in CONSTRAINT_NAMES) of parameter `p` of type
 * `type`, and records it in `rules`. Reports and records nothing more when it is wrong.
 */
export function checkConstraint(report: Reporter, p: Param, type: Ty, a: Annotation, rules: ParamRules): void {
  const name = a.name.name as keyof ParamRules;
  const bad = (message: string, at = a.range) => report.error(Codes.InvalidConstraint, message, at);
  if (type.kind === "error") return;
  if (!APPLIES[name]!.kinds.includes(type.kind)) {
    report.error(Codes.ConstraintNotForType, `@${name} applies to ${APPLIES[name]!.words}; '${p.name.name}' is ${showType(type)}`, a.range);
    return;
  }
  if (rules[name] !== undefined) return bad(`@${name} is given twice`);
  const v = a.value;
  if (isNumber(v) && v.invalid) return; // already reported by the lexer
  if (name !== "oneOf" && a.more) return bad(`@${name} takes one argument`, a.more[0]!.range);
  switch (name) {
    case "min":
    case "max": {
      if (type.kind === "date") {
        if (a.word?.name === "today") rules[name] = "today";
        else if (v?.type === "string" && isCalendarDate(v.value)) rules[name] = v.value;
        else bad(`@${name} on a date takes a day "YYYY-MM-DD" or today, such as @${name}(today); found ${a.word?.name ?? v?.raw ?? "nothing"}`, a.word?.range ?? v?.range ?? a.range);
        break;
      }
      if (!isNumber(v) || (type.kind === "int" && v.type !== "int")) {
        bad(`@${name} on ${showType(type)} takes ${type.kind === "int" ? "an integer" : "a number"}, found ${a.word?.name ?? v?.raw ?? "nothing"}`, a.word?.range ?? v?.range ?? a.range);
        break;
      }
      rules[name] = v.value;
      break;
    }
    case "minLength":
    case "maxLength":
      if (v === null || v.type !== "int" || v.value < 0) bad(`@${name} takes a non-negative integer, found ${a.word?.name ?? v?.raw ?? "nothing"}`, a.word?.range ?? v?.range ?? a.range);
      else rules[name] = v.value;
      break;
    case "pattern": {
      if (v === null || v.type !== "string" || v.value === "") {
        bad(`@pattern takes a non-empty string, such as @pattern("[A-Z]{2}[0-9]{6}")`, a.word?.range ?? v?.range ?? a.range);
        break;
      }
      if (v.value.length > MAX_PATTERN_CHARS) {
        bad(`@pattern is longer than ${MAX_PATTERN_CHARS} characters`, v.range);
        break;
      }
      const why = re2Problem(v.value);
      if (why !== null) {
        report.error(Codes.PatternNotRe2, `@pattern cannot be run in linear time (RE2 syntax: no backreferences or look-arounds): ${why}`, v.range);
        break;
      }
      rules.pattern = v.value;
      break;
    }
    case "email":
      if (v !== null || a.word) bad("@email takes no argument", a.word?.range ?? v?.range ?? a.range);
      else rules.email = true;
      break;
    case "oneOf": {
      const all = v === null ? [] : [v, ...(a.more ?? [])];
      if (all.length === 0 || a.word) {
        bad(`@oneOf takes one or more strings, such as @oneOf("low", "high")`, a.word?.range ?? a.range);
        break;
      }
      if (all.length > MAX_CHOICES) {
        bad(`@oneOf takes at most ${MAX_CHOICES} choices`);
        break;
      }
      const seen = new Set<string>();
      for (const c of all) {
        if (c.type !== "string" || c.value === "") return bad(`@oneOf takes non-empty strings, found ${c.raw}`, c.range);
        if (seen.has(c.value)) return bad(`@oneOf lists ${c.raw} twice`, c.range);
        seen.add(c.value);
      }
      rules.oneOf = [...seen];
      break;
    }
  }
}

/** FLOW131 when a minimum exceeds its maximum (no value could be answered). */
export function checkRuleBounds(report: Reporter, p: Param, rules: ParamRules): void {
  const clash = (lo: string, hi: string) =>
    report.error(Codes.InvalidConstraint, `@${lo} is greater than @${hi}: no value fits '${p.name.name}'`, p.range);
  if (typeof rules.min === "number" && typeof rules.max === "number" && rules.min > rules.max) clash("min", "max");
  // Dates: compare two literal days (YYYY-MM-DD compares as text); `today` moves, so it is not compared.
  if (typeof rules.min === "string" && typeof rules.max === "string" && rules.min !== "today" && rules.max !== "today" && rules.min > rules.max) clash("min", "max");
  if (rules.minLength !== undefined && rules.maxLength !== undefined && rules.minLength > rules.maxLength) clash("minLength", "maxLength");
}
