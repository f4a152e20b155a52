/**
 * Constraints on event parameters at run time (v0.5, issue 43 item 1; language reference
 * "Constraints on event parameters"): whether a value of the right type also keeps its
 * parameter's rules (`CompiledParam.rules`, made by lang/check-constraints.ts). Used by body.ts
 * only, so that every door — link (JSON and the page), task page, raise API, Slack modal, MCP —
 * checks them with one function (`checkBody`).
 *
 * | rule | holds when |
 * |---|---|
 * | `@min(n)` / `@max(n)` | number ≥ n / ≤ n; a date on or after / on or before the day (`today`: the UTC day of the check) |
 * | `@minLength(n)` / `@maxLength(n)` | the string's length in UTF-16 code units is ≥ n / ≤ n |
 * | `@pattern("…")` | the whole string matches, by RE2 (re2js): linear in the input, never backtracking |
 * | `@email` | one plain email address (email-address.ts, the rule of `send email to`) |
 * | `@oneOf(…)` | the string equals one of the choices |
 *
 * `null` (an optional parameter's "none") keeps every rule. Each broken rule is one problem
 * `{problem, rule}`: `problem` a phrase after the parameter's name ("must be at least 0"), `rule`
 * the annotation as written (`@min(0)`).
 */
import { RE2JS } from "re2js";
import type { ParamRules, TypeSpec } from "../../lang/compiled.js";
import { isEmailAddress } from "../../lang/runtime/email-address.js";
import { CalendarDate, parseCalendarDate } from "../../lang/runtime/values.js";

/** One broken rule. */
export interface RuleProblem {
  problem: string;
  rule: string;
}

/** Compiled patterns by source (deployed versions hold few); emptied when it grows past the cap. */
const patterns = new Map<string, RE2JS>();
const PATTERN_CACHE_CAP = 1000;

function compiled(pattern: string): RE2JS {
  let re = patterns.get(pattern);
  if (!re) {
    if (patterns.size >= PATTERN_CACHE_CAP) patterns.clear();
    re = RE2JS.compile(pattern);
    patterns.set(pattern, re);
  }
  return re;
}

const quote = (s: string) => JSON.stringify(s);

/** The rules as written in a workflow, in a fixed order: `@min(0) @maxLength(200) @oneOf("a", "b")`. */
export function rulesText(rules: ParamRules | undefined): string[] {
  if (!rules) return [];
  const out: string[] = [];
  const bound = (v: number | string) => (typeof v === "number" ? String(v) : v === "today" ? "today" : quote(v));
  if (rules.min !== undefined) out.push(`@min(${bound(rules.min)})`);
  if (rules.max !== undefined) out.push(`@max(${bound(rules.max)})`);
  if (rules.minLength !== undefined) out.push(`@minLength(${rules.minLength})`);
  if (rules.maxLength !== undefined) out.push(`@maxLength(${rules.maxLength})`);
  if (rules.pattern !== undefined) out.push(`@pattern(${quote(rules.pattern)})`);
  if (rules.email) out.push("@email");
  if (rules.oneOf !== undefined) out.push(`@oneOf(${rules.oneOf.map(quote).join(", ")})`);
  return out;
}

/** The day a date bound names: a literal day, or `today` (the UTC day of `now`). */
function dayOf(bound: string, now: Date): CalendarDate | null {
  return bound === "today" ? CalendarDate.of(now) : parseCalendarDate(bound);
}

/**
 * The rules `value` (already of `type`, in its JSON form) breaks; empty when it keeps them all.
 * `now` is the instant of the check (for `today`). Never throws on a value of the right type.
 */
export function ruleProblems(value: unknown, type: TypeSpec, rules: ParamRules | undefined, now: Date): RuleProblem[] {
  if (!rules || value === null || value === undefined) return [];
  const out: RuleProblem[] = [];
  const text = rulesText(rules);
  const ruleOf = (name: string) => text.find((t) => t.startsWith(`@${name}(`) || t === `@${name}`) ?? `@${name}`;
  if ((type.kind === "int" || type.kind === "decimal") && typeof value === "number") {
    if (typeof rules.min === "number" && value < rules.min) out.push({ problem: `must be at least ${rules.min}`, rule: ruleOf("min") });
    if (typeof rules.max === "number" && value > rules.max) out.push({ problem: `must be at most ${rules.max}`, rule: ruleOf("max") });
  }
  if (type.kind === "date" && typeof value === "string") {
    const day = parseCalendarDate(value);
    if (day) {
      const min = typeof rules.min === "string" ? dayOf(rules.min, now) : null;
      const max = typeof rules.max === "string" ? dayOf(rules.max, now) : null;
      if (min && day.day < min.day) out.push({ problem: rules.min === "today" ? `must not be in the past (before ${min})` : `must be on or after ${min}`, rule: ruleOf("min") });
      if (max && day.day > max.day) out.push({ problem: rules.max === "today" ? `must not be in the future (after ${max})` : `must be on or before ${max}`, rule: ruleOf("max") });
    }
  }
  if (type.kind === "string" && typeof value === "string") {
    if (rules.minLength !== undefined && value.length < rules.minLength) {
      out.push({ problem: rules.minLength === 1 ? "must not be empty" : `must be at least ${rules.minLength} characters long`, rule: ruleOf("minLength") });
    }
    if (rules.maxLength !== undefined && value.length > rules.maxLength) {
      out.push({ problem: `must be at most ${rules.maxLength} characters long`, rule: ruleOf("maxLength") });
    }
    if (rules.pattern !== undefined && !compiled(rules.pattern).matches(value)) {
      out.push({ problem: `must match the pattern ${quote(rules.pattern)}`, rule: ruleOf("pattern") });
    }
    if (rules.email && !isEmailAddress(value)) out.push({ problem: "must be one email address, such as name@example.com", rule: "@email" });
    if (rules.oneOf !== undefined && !rules.oneOf.includes(value)) {
      out.push({ problem: `must be one of ${rules.oneOf.map(quote).join(", ")}`, rule: ruleOf("oneOf") });
    }
  }
  return out;
}
