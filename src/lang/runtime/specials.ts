/**
 * The values of the language that are not data (language reference "Types": principal, slot,
 * matcher): a tracked entity row by name, a slot alias (or one element's slot inside `each`), a
 * `role(…)`/`user(…)`/`anyone()` matcher, a signed-in principal. Each is a plain object tagged by
 * `kind`; `isSpecial` tells them apart from entity records. `candidateNames` and `admits` read a
 * `Candidates` setting's evaluated matchers (the runtime reader of that slot setting).
 */
import type { Value } from "./values.js";

export interface Principal {
  kind: "principal";
  id: string;
  email: string | null;
  roles: string[];
}

export interface EntityRef {
  kind: "entityRef";
  name: string;
}

export interface SlotRef {
  kind: "slotRef";
  alias: string;
  /** Inside `each { … }` (v0.4): the one element's slot the alias stands for there. */
  element?: number;
}

/** The value the alias of a fanned-out slot has inside its `each { … }`: element `element`'s slot (v0.4). */
export function elementRef(alias: string, element: number): Value {
  return { kind: "slotRef", alias, element } satisfies SlotRef as unknown as Value;
}

export interface Matcher {
  kind: "matcher";
  /** `anyone()` (v0.5): any signed-in principal; its `value` is "". */
  matcher: "role" | "user" | "anyone";
  value: string;
}

export type Special = EntityRef | SlotRef | Matcher | Principal;

/** True when `v` is the special value of `kind` (not a record that merely has a `kind` field of another value). */
export function isSpecial(v: Value, kind: Special["kind"]): boolean {
  return typeof v === "object" && v !== null && !Array.isArray(v) && (v as Special).kind === kind;
}

/**
 * The principals a `Candidates` setting names, from its evaluated matcher values: the ids of its
 * `user(…)` entries and the names of its `role(…)` entries, each once, in source order (v0.4
 * "People inside the company": the inbox lists a slot for exactly these). `anyone()` names nobody:
 * such a slot is answered from its task page, listed in no inbox (docs/inbox.md). A name no
 * principal can hold (principalName) names nobody either, and is left out.
 */
export function candidateNames(matchers: Value[]): { users: string[]; roles: string[] } {
  const users = new Set<string>();
  const roles = new Set<string>();
  for (const m of matchers) {
    const matcher = m as Matcher;
    if (matcher.matcher === "anyone" || !principalName(matcher.value)) continue;
    (matcher.matcher === "role" ? roles : users).add(matcher.value);
  }
  return { users: [...users], roles: [...roles] };
}

/**
 * False for a role name or user id no principal can hold: one with a C0/C1 control character or
 * DEL (a principal with one is refused, auth/principal.ts checkedPrincipal). A built-in uses such
 * a name for "no role" / "no user" (src/mcp/builtins.ts); lists of candidates leave it out.
 */
export function principalName(value: string): boolean {
  return !/[\u0000-\u001f\u007f-\u009f]/.test(value);
}

/** True when the matcher values of a `Candidates` setting admit `principal` (`anyone()` admits every one). */
export function admits(matchers: Value[], principal: Principal): boolean {
  return matchers.some((m) => {
    const matcher = m as Matcher;
    if (matcher.matcher === "anyone") return true;
    return matcher.matcher === "role" ? principal.roles.includes(matcher.value) : principal.id === matcher.value;
  });
}
