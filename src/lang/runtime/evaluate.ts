/**
 * Evaluates a checked expression (language reference "Semantics"). Names resolve, innermost first:
 * `let` locals and bound parameters (scopes), then the aliases of the run's current state (slot
 * references), then workflow parameters (tracked rows for entity types, read-only input values
 * otherwise). Operators and built-in functions evaluate through their family entries
 * (../families/operators.ts, ../families/builtins.ts), beside their checks; members and methods of
 * slots, principals and records are read here. Reading a member through null gives null; a fault
 * throws `RuntimeFault` (fault.ts), which aborts the step.
 */
import type { Expr, Range } from "../ast.js";
import { BUILTINS } from "../families/builtins.js";
import { BINARY, UNARY, type OperatorSite } from "../families/operators.js";
import { RuntimeFault } from "./fault.js";
import type { Scope } from "./scope.js";
import { isSpecial, type EntityRef, type Principal, type SlotRef } from "./specials.js";
import { CalendarDate, display, Duration, type Value } from "./values.js";
import type { World } from "./world.js";

/** Evaluates `expr` in `scope` for `step`. */
export function evaluate(step: World, scope: Scope, expr: Expr): Value {
  switch (expr.kind) {
    case "literal":
      return expr.type === "duration" ? new Duration(expr.value as number) : expr.value;
    case "list":
      return expr.elements.map((e) => evaluate(step, scope, e));
    case "name":
      return resolveName(step, scope, expr.name, expr.range);
    case "member":
      return member(step, evaluate(step, scope, expr.object), expr.property.name, expr.range);
    case "call":
      return call(step, scope, expr);
    case "unary":
      return UNARY[expr.op].evaluate(evaluate(step, scope, expr.operand), expr.range);
    case "binary": {
      const site: OperatorSite = { op: expr.op, range: expr.range, numeric: expr.numeric, joinText: (v) => joinText(step, v) };
      return BINARY[expr.op].evaluate(evaluate(step, scope, expr.left), () => evaluate(step, scope, expr.right), site);
    }
  }
}

function resolveName(step: World, scope: Scope, name: string, range: Range): Value {
  const local = scope.lookup(name);
  if (local.found) return local.value!;
  const state = step.workflow.states[step.run.state];
  if (state?.slots.some((s) => s.alias === name)) return { kind: "slotRef", alias: name } satisfies SlotRef;
  const param = step.workflow.params.find((p) => p.name === name);
  if (param) {
    if (param.type.kind === "entity") return { kind: "entityRef", name } satisfies EntityRef;
    return step.inputValue(name);
  }
  throw new RuntimeFault(`unknown name "${name}"`, range);
}

function member(step: World, target: Value, name: string, range: Range): Value {
  // Reading through null gives null (the checker types such a read as optional).
  if (target === null) return null;
  if (isSpecial(target, "entityRef")) {
    const row = step.entities.get((target as EntityRef).name)!;
    return row.data[name] ?? null;
  }
  if (isSpecial(target, "slotRef")) {
    if (name === "done") return step.isAliasDone((target as SlotRef).alias);
    if (name === "count") return step.aliasCount((target as SlotRef).alias);
    if (name === "error" || name === "status" || name === "attempts") {
      // v0.5 calls: what the call runtime knows of this call (World.callInfo)
      const ref = target as SlotRef;
      if (!step.callInfo) throw new RuntimeFault(`slot "${ref.alias}" has no call information`, range);
      const info = step.callInfo(ref.alias, ref.element ?? null);
      return info[name];
    }
    throw new RuntimeFault(`slot has no member "${name}"`, range);
  }
  if (isSpecial(target, "principal")) {
    const p = target as Principal;
    if (name === "id") return p.id;
    if (name === "email") return p.email;
    if (name === "roles") return [...p.roles];
  }
  if (typeof target === "object" && !Array.isArray(target) && !(target instanceof Date) && !(target instanceof Duration) && !(target instanceof CalendarDate)) {
    // A nested entity value (an entity-typed field, or an element of a list of entities): a record.
    const fields = target as Record<string, Value>;
    return Object.prototype.hasOwnProperty.call(fields, name) ? (fields[name] ?? null) : null;
  }
  throw new RuntimeFault(`value has no member "${name}"`, range);
}

function call(step: World, scope: Scope, expr: Extract<Expr, { kind: "call" }>): Value {
  const args = () => expr.args.map((a) => evaluate(step, scope, a));
  if (expr.callee.kind === "member") {
    const target = evaluate(step, scope, expr.callee.object);
    const method = expr.callee.property.name;
    if (target === null) throw new RuntimeFault(`null dereference calling ".${method}()"`, expr.range);
    if (isSpecial(target, "slotRef") && method === "CallbackUrl") {
      const ref = target as SlotRef;
      const url = step.mintCallbackUrl(ref.alias, ref.element ?? null);
      if (url === null) throw new RuntimeFault(`CallbackUrl() on slot "${ref.alias}", which is not open or waiting`, expr.range);
      return url;
    }
    if (isSpecial(target, "slotRef") && method === "TaskUrl") {
      const ref = target as SlotRef;
      return step.taskUrl(ref.alias, ref.element ?? null);
    }
    if (isSpecial(target, "principal") && method === "hasRole") {
      const [role] = args();
      return (target as Principal).roles.includes(String(role));
    }
    throw new RuntimeFault(`unknown method "${method}"`, expr.range);
  }
  if (expr.callee.kind !== "name") throw new RuntimeFault("expression is not callable", expr.range);
  const fn = expr.callee.name;
  const a = args();
  const builtin = BUILTINS.get(fn);
  if (builtin) return builtin.evaluate(a, { now: step.now, range: expr.range });
  throw new RuntimeFault(`unknown function "${fn}"`, expr.range);
}

/** A value's text where it joins a string: numbers through `step.numberText` when it is set. */
function joinText(step: World, v: Value): string {
  if ((typeof v === "boolean" || v instanceof Date) && step.valueText) return step.valueText(v);
  return typeof v === "number" && step.numberText ? step.numberText(v) : display(v);
}
