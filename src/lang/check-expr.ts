/**
 * Types of expressions (docs/language.md, "Types", "Operators", "Built-in functions",
 * "CallbackUrl()"). `ExprChecker.check` returns an expression's type, reports what is wrong with it
 * and annotates binary operators (`numeric`, `operandTypes`) for the interpreter.
 */
import type { BinaryExpr, CallExpr, Expr, MemberExpr, Range } from "./ast.js";
import { BUILTINS, type Builtin } from "./families/builtins.js";
import { Codes } from "./codes.js";
import type { EntityInfo, Reporter, ReturnsInfo, SlotInfo } from "./info.js";
import { binaryType, unaryType } from "./families/operators.js";
import { nonNullWhen, nullFix, pathText, withNonNull } from "./narrowing.js";
import { bindingWord, type Binding, type Scope } from "./scope.js";
import { assignable, isValue, operandKind, showType, T, withOptional, type Ty } from "./types.js";

/** Where an expression is checked. */
export interface ExprEnv {
  scope: Scope;
  /** Inside `on x(…)` / `on x.expired` (and their arms): x, whose link cannot be minted there. */
  closedAlias: string | null;
  /**
   * Inside the `each { … }` of fanned-out slot x (v0.4 Many responders): x, which there stands for
   * one element's slot, so `x.CallbackUrl()` is allowed. Absent or null elsewhere.
   */
  elementAlias?: string | null;
  /** Inside `on x.failed` (v0.5 calls): x, whose `x.error` is then a `string` (not `string?`). */
  failedAlias?: string | null;
  /** Paths (`x`, `v.o`) a null check around the expression proved non-null (narrowing.ts); absent: none. */
  nonNull?: ReadonlySet<string>;
}

/** Tables the expression checker reads. */
export interface CheckContext {
  report: Reporter;
  entities: Map<string, EntityInfo>;
  /** The states that declare each slot alias, to explain an alias used outside its state. */
  aliasStates: Map<string, string[]>;
  /** The workflow's `returns E` (v0.5 Results), set once events are declared; null when it has none. */
  returns?: ReturnsInfo | null;
}

const ARITHMETIC = new Set(["+", "-", "*", "/", "%"]);

const PRINCIPAL_MEMBERS: Record<string, Ty> = {
  id: T.string,
  email: T.optString,
  roles: T.listOf(T.string),
};

type Target = { slot: SlotInfo } | { type: Ty };

/** How a message lists a slot alias's members. */
const SLOT_MEMBERS = "only 'done', 'count', 'CallbackUrl()' and 'TaskUrl()'";
/** How a message lists a call's slot members (v0.5). */
const CALL_MEMBERS = "only 'done', 'count', 'error', 'status' and 'attempts'";
/** The members only a call's slot has (v0.5), with their types outside `on x.failed`. */
const CALL_ONLY_MEMBERS: Record<string, Ty> = { error: T.optString, status: { kind: "int", optional: true }, attempts: T.int };

export class ExprChecker {
  constructor(private readonly ctx: CheckContext) {}

  /** The type of `e` in `env`; `error` (already reported) when it has none. */
  check(e: Expr, env: ExprEnv): Ty {
    switch (e.kind) {
      case "literal":
        if ((e.type === "int" || e.type === "decimal") && e.invalid) return T.error;
        return e.type === "null" ? T.null : T[e.type];
      case "name": {
        const b = this.resolve(e.name, e.range, env);
        if (b === null) return T.error;
        if (b.kind === "alias") {
          this.ctx.report.error(
            Codes.SlotNotAValue,
            `slot alias '${e.name}' is not a value: use ${e.name}.done or ${e.name}.CallbackUrl()`,
            e.range,
          );
          return T.error;
        }
        return this.narrowed(e, b.type, env);
      }
      case "member":
        return this.narrowed(e, this.member(e, env), env);
      case "call":
        return this.call(e, env);
      case "binary":
        return this.binary(e, env);
      case "unary": {
        const t = this.check(e.operand, env);
        const r = unaryType(e.op, t);
        if (!r.ok) this.ctx.report.error(r.code, r.message, e.range);
        return r.type;
      }
      case "list":
        return this.list(e.elements, env);
    }
  }

  /** A `Candidates` entry: `role(string)`, `user(string)` or `anyone()`. */
  checkMatcher(e: Expr, env: ExprEnv): void {
    if (e.kind === "call" && e.callee.kind === "name") {
      const b = BUILTINS.get(e.callee.name);
      if (b?.matcher) {
        this.builtinCall(b, e, env);
        return;
      }
    }
    this.ctx.report.error(Codes.InvalidMatcher, 'a Candidates entry is role("…"), user("…") or anyone()', e.range);
  }

  /** Resolves a name, reporting FLOW105 (unknown) or FLOW309 (a slot alias out of its scope). */
  resolve(name: string, range: Range, env: ExprEnv): Binding | null {
    const b = env.scope.lookup(name);
    if (b !== undefined) return b;
    const states = this.ctx.aliasStates.get(name);
    if (states !== undefined) {
      this.ctx.report.error(
        Codes.AliasNotInScope,
        `slot alias '${name}' is not in scope here: it belongs to state ${states.join(", ")}, and a state's aliases are in scope only in that state's handler bodies`,
        range,
      );
    } else {
      this.ctx.report.error(Codes.UnknownName, `unknown name '${name}'`, range);
    }
    return null;
  }

  private target(obj: Expr, env: ExprEnv): Target {
    if (obj.kind === "name") {
      const b = this.resolve(obj.name, obj.range, env);
      if (b === null) return { type: T.error };
      if (b.kind === "alias" && b.slot) return { slot: b.slot };
      return { type: b.type };
    }
    return { type: this.check(obj, env) };
  }

  private member(e: MemberExpr, env: ExprEnv): Ty {
    const t = this.target(e.object, env);
    const prop = e.property.name;
    const report = this.ctx.report;
    if ("slot" in t) {
      if (prop === "done") return T.bool;
      if (prop === "count") return T.int;
      const callType = Object.hasOwn(CALL_ONLY_MEMBERS, prop) ? CALL_ONLY_MEMBERS[prop] : undefined;
      if (callType !== undefined && t.slot.call) return this.callMember(t.slot, prop, callType, e, env);
      if (callType !== undefined) {
        report.error(
          Codes.UnknownMember,
          `'${prop}' is a member of a call's slot (call … as ${t.slot.alias}); '${t.slot.alias}' is a person's slot (subscribe), which has ${SLOT_MEMBERS}`,
          e.property.range,
        );
      } else if (prop === "CallbackUrl" || prop === "TaskUrl") {
        report.error(Codes.SlotNotAValue, `${prop} is a method: write ${t.slot.alias}.${prop}()`, e.range);
      } else {
        report.error(Codes.UnknownMember, `slot alias '${t.slot.alias}' has ${t.slot.call ? CALL_MEMBERS : SLOT_MEMBERS}`, e.property.range);
      }
      return T.error;
    }
    const type = t.type;
    if (type.kind === "error") return T.error;
    if (type.kind === "entity") {
      const field = this.ctx.entities.get(type.name)?.fields.get(prop);
      if (field === undefined) {
        report.error(Codes.UnknownMember, `entity ${type.name} has no field '${prop}'`, e.property.range);
        return T.error;
      }
      // Reading through an optional entity gives null when the entity is null.
      return type.optional ? withOptional(field.type, true) : field.type;
    }
    if (type.kind === "principal") {
      const m = PRINCIPAL_MEMBERS[prop];
      if (m !== undefined) return m;
      const message =
        prop === "hasRole"
          ? `hasRole is a method: write ${exprText(e.object)}.hasRole("…")`
          : `a principal has 'id', 'email', 'roles' and 'hasRole(…)', not '${prop}'`;
      report.error(Codes.UnknownMember, message, e.property.range);
      return T.error;
    }
    report.error(Codes.UnknownMember, `a value of type ${showType(type)} has no member '${prop}'`, e.property.range);
    return T.error;
  }

  /**
   * `x.error` / `x.status` / `x.attempts` of call x (v0.5): `string` inside `on x.failed`,
   * `string?` elsewhere (null until the call failed); `int?`; `int`. On a fanned-out call they
   * need the alias to stand for one element: in x's own handlers and its `each` (FLOW377).
   */
  private callMember(slot: SlotInfo, prop: string, type: Ty, e: MemberExpr, env: ExprEnv): Ty {
    if (slot.fannedOut && env.closedAlias !== slot.alias && env.elementAlias !== slot.alias) {
      this.ctx.report.error(
        Codes.CallMemberFanOut,
        `'${slot.alias}' is fanned out (one call per element): ${slot.alias}.${prop} names one call only in ${slot.alias}'s own handlers (on ${slot.alias}(…), on ${slot.alias}.failed, on ${slot.alias}.expired) and its each { … }`,
        e.range,
      );
      return T.error;
    }
    if (prop === "error" && env.failedAlias === slot.alias) return T.string;
    return type;
  }

  private call(e: CallExpr, env: ExprEnv): Ty {
    const report = this.ctx.report;
    const callee = e.callee;
    if (callee.kind === "name") {
      const b = BUILTINS.get(callee.name);
      if (b === undefined) {
        const local = env.scope.lookup(callee.name);
        if (local !== undefined) {
          report.error(Codes.NotCallable, `'${callee.name}' is a ${bindingWord(local.kind)}, not a function`, callee.range);
        } else {
          report.error(
            Codes.UnknownFunction,
            `unknown function '${callee.name}': the built-in functions are ${[...BUILTINS.keys()].join(", ")}`,
            callee.range,
          );
        }
        this.args(e, env);
        return T.error;
      }
      if (b.matcher) {
        report.error(
          Codes.MatcherOutsideCandidates,
          `${b.name}() is a Candidates matcher: it may only be an entry of a slot's Candidates`,
          e.range,
        );
      }
      return this.builtinCall(b, e, env);
    }
    if (callee.kind === "member") {
      const t = this.target(callee.object, env);
      const prop = callee.property.name;
      if ("slot" in t && t.slot.call && (prop === "CallbackUrl" || prop === "TaskUrl")) {
        this.args(e, env);
        report.error(
          Codes.CallHasNoLink,
          `'${t.slot.alias}' is a call: its slot is answered by its callee only, so it has no link and no task page (${prop}()); a person's answer needs a subscribe`,
          e.range,
        );
        return T.string;
      }
      if ("slot" in t) {
        if (prop === "CallbackUrl") return this.callbackUrl(t.slot, e, env);
        if (prop === "TaskUrl") return this.taskUrl(t.slot, e, env);
        this.args(e, env);
        if (prop === "done" || prop === "count") report.error(Codes.NotCallable, `'${prop}' is not a method: write ${t.slot.alias}.${prop}`, e.range);
        else report.error(Codes.UnknownMember, `slot alias '${t.slot.alias}' has ${SLOT_MEMBERS}`, callee.property.range);
        return T.error;
      }
      const args = this.args(e, env);
      if (t.type.kind === "error") return T.error;
      if (t.type.kind === "principal" && prop === "hasRole") {
        if (args.length !== 1) {
          report.error(Codes.ArgumentCount, `hasRole takes 1 argument, found ${args.length}`, e.range);
        } else if (!assignable(args[0], T.string)) {
          report.error(Codes.TypeMismatch, `hasRole needs a string, found ${showType(args[0])}`, e.args[0].range);
        }
        return T.bool;
      }
      report.error(Codes.NotCallable, `a value of type ${showType(t.type)} has no method '${prop}'`, callee.property.range);
      return T.error;
    }
    this.check(callee, env);
    this.args(e, env);
    report.error(Codes.NotCallable, "only built-in functions and methods can be called", callee.range);
    return T.error;
  }

  private args(e: CallExpr, env: ExprEnv): Ty[] {
    return e.args.map((a) => this.check(a, env));
  }

  private builtinCall(b: Builtin, e: CallExpr, env: ExprEnv): Ty {
    const args = this.args(e, env);
    if (args.length !== b.arity) {
      const noun = b.arity === 1 ? "argument" : "arguments";
      this.ctx.report.error(Codes.ArgumentCount, `${b.name}() takes ${b.arity} ${noun} (${b.signature}), found ${args.length}`, e.range);
      return b.type(Array.from({ length: b.arity }, () => T.error)).type;
    }
    const r = b.type(args);
    if (r.bad) this.ctx.report.error(Codes.TypeMismatch, r.bad.message + nullFix(e.args[r.bad.index], args[r.bad.index]), e.args[r.bad.index].range);
    return r.type;
  }

  /** `x.CallbackUrl()`: the compile-time rules of links. */
  private callbackUrl(slot: SlotInfo, e: CallExpr, env: ExprEnv): Ty {
    const report = this.ctx.report;
    this.args(e, env);
    if (e.args.length > 0) report.error(Codes.ArgumentCount, "CallbackUrl() takes no arguments", e.range);
    if (slot.fannedOut && env.elementAlias !== slot.alias) {
      report.error(
        Codes.CallbackUrlFanOut,
        `cannot mint a link for '${slot.alias}': it is fanned out (for each), one alias for many slots, so a link could not name the slot it completes; mint one per element inside its 'each { … }' or a timer on it (every 2d { … } in its block)`,
        e.range,
      );
    } else if (env.closedAlias === slot.alias) {
      report.error(
        Codes.CallbackUrlInOwnHandler,
        `cannot mint a link for '${slot.alias}' in its own handler: the slot is already closed here`,
        e.range,
      );
    } else {
      if (slot.event?.hasAuthorize) {
        report.warning(
          Codes.CallbackUrlAuthorize,
          `security: event ${slot.event.name} has [Authorize], but neither it nor Candidates is checked for deposits through this link: whoever holds the link can complete '${slot.alias}'. Send it only to whom may answer, and let no one who may not answer choose where it goes`,
          e.range,
        );
      }
      if (admitsAnyone(slot)) {
        report.warning(
          Codes.CallbackUrlAnyone,
          `'${slot.alias}' has Candidates: anyone() and a link: anyone signed in can answer it as well as the link's holder (two doors for two audiences); name its candidates, or drop anyone() to make it link-only`,
          e.range,
        );
      }
    }
    return T.string;
  }

  /**
   * `x.TaskUrl()` (v0.4, People inside the company): the task page's URL, not a credential —
   * allowed wherever `CallbackUrl()` is, and in x's own handler too (the page says how it ended).
   */
  private taskUrl(slot: SlotInfo, e: CallExpr, env: ExprEnv): Ty {
    this.args(e, env);
    if (e.args.length > 0) this.ctx.report.error(Codes.ArgumentCount, "TaskUrl() takes no arguments", e.range);
    if (slot.fannedOut && env.elementAlias !== slot.alias) {
      this.ctx.report.error(
        Codes.CallbackUrlFanOut,
        `cannot name the task of '${slot.alias}': it is fanned out (for each), one alias for many slots; name one element's task inside its 'each { … }' or a timer on it`,
        e.range,
      );
    }
    return T.string;
  }

  /** `t` without its `?` when a null check around `e` proved the path non-null (narrowing.ts). */
  private narrowed(e: Expr, t: Ty, env: ExprEnv): Ty {
    if (env.nonNull === undefined || !isValue(t) || !t.optional) return t;
    const path = pathText(e);
    return path !== null && env.nonNull.has(path) ? withOptional(t, false) : t;
  }

  private binary(e: BinaryExpr, env: ExprEnv): Ty {
    const l = this.check(e.left, env);
    // `a && b`: b runs only when a holds; `a || b`: only when a fails. What that proves narrows b.
    const proved = e.op === "&&" ? nonNullWhen(e.left, true) : e.op === "||" ? nonNullWhen(e.left, false) : [];
    const r = this.check(e.right, proved.length > 0 ? { ...env, nonNull: withNonNull(env.nonNull, proved) } : env);
    const result = binaryType(e.op, l, r);
    if (!result.ok) this.ctx.report.error(result.code, result.message, e.range);
    e.operandTypes = { left: operandKind(l), right: operandKind(r) };
    if (result.ok && result.numeric && ARITHMETIC.has(e.op)) e.numeric = result.numeric;
    else delete e.numeric;
    return result.type;
  }

  private list(elements: Expr[], env: ExprEnv): Ty {
    let element: Ty | null = null;
    let sawNull = false;
    for (const el of elements) {
      const t = this.check(el, env);
      if (t.kind === "null") {
        sawNull = true;
        continue;
      }
      if (!isValue(t)) {
        if (t.kind !== "error") this.ctx.report.error(Codes.TypeMismatch, `${showType(t)} cannot be a list element`, el.range);
        element ??= T.error;
        continue;
      }
      if (element === null || element.kind === "error") element = element ?? t;
      else if (assignable(t, element)) continue;
      else if (assignable(element, t)) element = t;
      else {
        this.ctx.report.error(
          Codes.TypeMismatch,
          `list elements must share one type: ${showType(t)} does not fit ${showType(element)}`,
          el.range,
        );
      }
    }
    const el = element ?? T.error;
    return T.listOf(sawNull ? withOptional(el, true) : el);
  }
}

/** A short source-like rendering of a name or member path, for messages. */
export function exprText(e: Expr): string {
  if (e.kind === "name") return e.name;
  if (e.kind === "member") return `${exprText(e.object)}.${e.property.name}`;
  return "…";
}

/**
 * True when slot `slot`'s `Candidates` has an `anyone()` entry: any signed-in principal may
 * answer it through the ordinary path (v0.5, issue 38 M2; FLOW319 when it also mints a link).
 */
export function admitsAnyone(slot: Pick<SlotInfo, "decl">): boolean {
  const candidates = slot.decl.settings.find((s) => s.kind === "candidates");
  return (
    candidates?.kind === "candidates" &&
    candidates.matchers.some((m) => m.kind === "call" && m.callee.kind === "name" && m.callee.name === "anyone")
  );
}
