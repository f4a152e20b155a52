/**
 * Evaluates checked expressions and runs statements of a compiled workflow inside a step.
 *
 * Values follow values.ts. Names resolve, innermost first: `let` locals and bound parameters
 * (scopes), then the aliases of the run's current state (slot references), then workflow
 * parameters (tracked rows for entity types, read-only input values otherwise).
 *
 * Effects go to the step (link mints, mail, slot drops, field writes), so nothing touches the
 * database until the step flushes. Any runtime error throws `RuntimeFault`, which aborts the
 * whole step (language reference "Errors"): `@maxLength`/`@minLength` violated, integer overflow
 * or division by zero, minting for a closed slot, mail with a null address, subject or body, a
 * null where a value is required. Reading a member through null gives null, and null in string
 * concatenation is empty text (language reference "Semantics").
 * Messages name the construct and its line but never a value, so a token cannot leak into them.
 *
 * Operators and built-in functions evaluate through their family entries (src/lang/families:
 * each construct's check beside its evaluation); this module resolves names, members, methods and
 * statements. It imports nothing of the engine (dependency-cruiser `lang-runtime-inside-lang`).
 */
import type { EndpointRef, Expr, Range, Statement } from "../ast.js";
import type { CompiledWorkflow } from "../compiled.js";
import { BUILTINS } from "../families/builtins.js";
import { BINARY, UNARY, type OperatorSite } from "../families/operators.js";
import { isEmailAddress } from "./email-address.js";
import { RuntimeFault } from "./fault.js";
import { isSpecial, type EntityRef, type Principal, type SlotRef } from "./specials.js";
import { CalendarDate, display, Duration, type Value } from "./values.js";

export { RuntimeFault } from "./fault.js";
export { admits, candidateNames, elementRef, type Principal } from "./specials.js";
export { display, equals } from "./values.js";

/**
 * The world the interpreter runs in, handed to it by the step (style.md 12: an evaluator receives
 * its environment rather than importing it). `Step` implements it, delegating slot and link
 * effects to their lifecycle modules, so the interpreter imports neither slot.ts nor link.ts.
 */
export interface World {
  readonly now: Date;
  readonly workflow: CompiledWorkflow;
  readonly run: { readonly state: string };
  readonly entities: Map<string, { entity: string; data: Record<string, Value> }>;
  /** A scalar workflow parameter's runtime value (read-only input). */
  inputValue(name: string): Value;
  /** `x.done`: every slot of the alias is completed. */
  isAliasDone(alias: string): boolean;
  /**
   * `x.CallbackUrl()`: mints a link for the alias's open or waiting slot — or, inside `each`, for
   * element `element`'s slot (v0.4); null when it has none.
   */
  mintCallbackUrl(alias: string, element?: number | null): string | null;
  /** `x.TaskUrl()` (v0.4): the task page's absolute URL of the alias (or of its element `element`) on this run. */
  taskUrl(alias: string, element?: number | null): string;
  /** `x.count` (v0.4): how many slots (elements) of the alias are completed. */
  aliasCount(alias: string): number;
  /** `drop slot x`. */
  dropSlot(alias: string): void;
  /**
   * `x.error` / `x.status` / `x.attempts` of call x (v0.5; lang/compiled.ts CompiledCall) — of
   * element `element`'s call when the alias stands for one element (fanned-out calls), else of
   * the alias's one call. `error` is null until the call failed, `status` the last HTTP status
   * (null when none), `attempts` the attempts made so far. Optional until the call runtime
   * implements it: without it a read is a runtime fault.
   */
  callInfo?(alias: string, element: number | null): { error: string | null; status: number | null; attempts: number };
  /**
   * `result { … }` (v0.5 Results; lang/compiled.ts CompiledWorkflow.returns): the fields' JSON
   * values replace the run's pending result; it is kept only if the step commits.
   */
  setResult?(fields: Record<string, unknown>): void;
  /** Queues a message; `extra` holds `replyTo`/`cc` when the statement gives them (issue 19). */
  queueMail(to: string, subject: string, body: string, extra?: { replyTo?: string; cc?: string }): string;
  /** `send webhook` / `send message` (issue 18): queues a delivery in the step's outbox; returns its id. */
  queueDelivery(delivery: QueuedDelivery): string;
  addHistory(kind: string, data?: Record<string, unknown>): void;
  /** v0.5: the ids of the links minted in this step that queued mail `outboxId` carries (steps only). */
  mailedLinks?(outboxId: string): string[];
  markEntityDirty(name: string): void;
  /**
   * How an int or decimal reads where it joins a string; absent, as JavaScript prints it (`25000`,
   * `2.5`). The responder page's view sets it to mark numbers it formats for the reader's locale
   * (views/responder.ts `markNumbers`); steps never set it, so stored and sent text is unchanged.
   */
  readonly numberText?: (n: number) => string;
  /**
   * How a bool or datetime reads where it joins a string (issue 42); absent, `true` and ISO 8601.
   * The responder page's view sets it to mark them for the reader's language and time zone.
   */
  readonly valueText?: (v: boolean | Date) => string;
}

/**
 * A delivery as the interpreter hands it to the step: the endpoint's name and what is sent —
 * `{type, data}` for a webhook, `{text, link?, label?}` for a message (JSON values).
 */
export type QueuedDelivery =
  | { statement: "webhook"; endpoint: string; payload: { type: string; data: Record<string, unknown> } }
  | { statement: "message"; endpoint: string; payload: { text: string; link?: string; label?: string }; answer?: string };


/** A chain of variable bindings. */
export class Scope {
  private readonly vars = new Map<string, Value>();
  constructor(readonly parent: Scope | null = null) {}
  static of(bindings: Record<string, Value>, parent: Scope | null = null): Scope {
    const s = new Scope(parent);
    for (const [k, v] of Object.entries(bindings)) s.vars.set(k, v);
    return s;
  }
  child(): Scope {
    return new Scope(this);
  }
  declare(name: string, value: Value): void {
    this.vars.set(name, value);
  }
  lookup(name: string): { found: boolean; value?: Value; scope?: Scope } {
    for (let s: Scope | null = this; s; s = s.parent) {
      if (s.vars.has(name)) return { found: true, value: s.vars.get(name), scope: s };
    }
    return { found: false };
  }
  set(name: string, value: Value): boolean {
    for (let s: Scope | null = this; s; s = s.parent) {
      if (s.vars.has(name)) {
        s.vars.set(name, value);
        return true;
      }
    }
    return false;
  }
}


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

/** `text` as a JSON string for a message, shortened past 80 characters. */
function quoteForMessage(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}…` : text);
}

/** A value's text where it joins a string: numbers through `step.numberText` when it is set. */
function joinText(step: World, v: Value): string {
  if ((typeof v === "boolean" || v instanceof Date) && step.valueText) return step.valueText(v);
  return typeof v === "number" && step.numberText ? step.numberText(v) : display(v);
}

/** Runs `statements` in a child of `scope` (a block: its `let`s end with it). */
export function execute(step: World, scope: Scope, statements: Statement[]): void {
  executeIn(step, scope.child(), statements);
}

/** Runs `statements` in `scope` itself, so their `let`s stay visible after them (a handler's arms see them). */
export function executeIn(step: World, scope: Scope, statements: Statement[]): void {
  for (const st of statements) executeOne(step, scope, st);
}

function executeOne(step: World, scope: Scope, st: Statement): void {
  switch (st.kind) {
    case "let":
      scope.declare(st.name.name, evaluate(step, scope, st.value));
      return;
    case "assign":
      assign(step, scope, st);
      return;
    case "sendEmail": {
      const to = evaluate(step, scope, st.to);
      if (to === null) throw new RuntimeFault("send email to null", st.range);
      const subject = evaluate(step, scope, st.subject);
      if (subject === null) throw new RuntimeFault("send email with a null subject", st.range);
      const body = evaluate(step, scope, st.body);
      if (body === null) throw new RuntimeFault("send email with a null body", st.range);
      // One recipient, exactly (issue 8 item 18): a list, a group, a display name or an empty
      // address is a runtime error of the step — nothing is queued, an incident is recorded.
      if (!isEmailAddress(display(to))) {
        throw new RuntimeFault(`send email to ${quoteForMessage(display(to))}: not exactly one email address (local@domain)`, st.to.range);
      }
      // replyTo and cc (issue 19 item 6): one address each, checked like `to`.
      const extra: { replyTo?: string; cc?: string } = {};
      for (const [name, expr] of [["replyTo", st.replyTo], ["cc", st.cc]] as const) {
        if (!expr) continue;
        const v = evaluate(step, scope, expr);
        if (v === null) throw new RuntimeFault(`send email with a null ${name}`, expr.range);
        if (!isEmailAddress(display(v))) {
          throw new RuntimeFault(`send email ${name} ${quoteForMessage(display(v))}: not exactly one email address (local@domain)`, expr.range);
        }
        extra[name] = display(v);
      }
      const id = step.queueMail(display(to), display(subject), display(body), extra);
      // v0.5: the links this mail carries, so a deposit can say whom slotflow sent its link to
      const links = step.mailedLinks?.(id) ?? [];
      step.addHistory("email-queued", { outboxId: id, to: display(to), ...extra, ...(links.length > 0 ? { links } : {}) });
      return;
    }
    case "sendWebhook": {
      const type = evaluate(step, scope, st.type);
      if (type === null) throw new RuntimeFault("send webhook with a null type", st.range);
      const data: Record<string, unknown> = {};
      for (const f of st.data) data[f.name.name] = jsonOf(step, evaluate(step, scope, f.value), 0);
      const endpoint = endpointOf(step, scope, st.endpoint);
      const id = step.queueDelivery({ statement: "webhook", endpoint, payload: { type: display(type), data } });
      step.addHistory("webhook-queued", { deliveryId: id, endpoint });
      return;
    }
    case "sendMessage": {
      const text = evaluate(step, scope, st.text);
      if (text === null) throw new RuntimeFault("send message with a null text", st.range);
      const payload: { text: string; link?: string; label?: string } = { text: display(text) };
      const link = st.link ? evaluate(step, scope, st.link) : null;
      const label = st.label ? evaluate(step, scope, st.label) : null;
      if (link !== null && display(link) !== "") payload.link = display(link);
      if (label !== null) payload.label = display(label);
      const endpoint = endpointOf(step, scope, st.endpoint);
      const id = step.queueDelivery({ statement: "message", endpoint, payload, ...(st.answer ? { answer: st.answer.name } : {}) });
      step.addHistory("message-queued", { deliveryId: id, endpoint });
      return;
    }
    case "dropSlot":
      step.dropSlot(st.alias.name);
      return;
    case "if":
      if (evaluate(step, scope, st.condition)) execute(step, scope, st.then);
      else if (st.else) execute(step, scope, st.else);
      return;
    case "expr":
      evaluate(step, scope, st.expr);
      return;
    case "result": {
      // v0.5 Results: the fields in their JSON form, the run's pending result (the last one counts)
      const fields: Record<string, unknown> = {};
      for (const f of st.fields) fields[f.name.name] = jsonOf(step, evaluate(step, scope, f.value), 0);
      if (!step.setResult) throw new RuntimeFault("result { … } cannot be recorded here", st.range);
      step.setResult(fields);
      return;
    }
  }
}

/**
 * The endpoint a `send webhook` / `send message` goes to: the literal its source names, or — for a
 * built-in workflow whose compiled form carries `expr` (src/mcp/builtins.ts) — that expression's
 * value. A null value is a fault, like a null text.
 */
function endpointOf(step: World, scope: Scope, ref: EndpointRef): string {
  if (!ref.expr) return ref.name;
  const v = evaluate(step, scope, ref.expr);
  if (v === null) throw new RuntimeFault("send to a null endpoint", ref.range);
  return display(v);
}

/** The JSON form of a value (v0.5: a call's `Input` fields, a `result`), as for a webhook's data. */
export function jsonValue(step: World, v: Value): unknown {
  return jsonOf(step, v, 0);
}

/** Nesting bound of `jsonOf` (values are bounded by their types; this bounds the walk anyway). */
const MAX_JSON_DEPTH = 64;

/** The JSON form of a value for a webhook's data (issue 18): tracked rows by their fields, dates ISO 8601. */
function jsonOf(step: World, v: Value, depth: number): unknown {
  if (depth > MAX_JSON_DEPTH) throw new RuntimeFault("a value nested too deeply for a webhook");
  if (v === null || typeof v !== "object") return v;
  if (v instanceof Date || v instanceof Duration || v instanceof CalendarDate) return display(v);
  if (Array.isArray(v)) return v.map((e) => jsonOf(step, e, depth + 1));
  if (isSpecial(v, "entityRef")) return jsonOf(step, step.entities.get((v as EntityRef).name)?.data ?? null, depth + 1);
  if (isSpecial(v, "principal")) {
    const p = v as Principal;
    return { id: p.id, email: p.email, roles: [...p.roles] };
  }
  if (isSpecial(v, "slotRef") || isSpecial(v, "matcher")) throw new RuntimeFault("a slot or matcher has no JSON form");
  const out: Record<string, unknown> = {};
  for (const [k, e] of Object.entries(v as Record<string, Value>)) out[k] = jsonOf(step, e, depth + 1);
  return out;
}

function assign(step: World, scope: Scope, st: Extract<Statement, { kind: "assign" }>): void {
  const value = evaluate(step, scope, st.value);
  const [head, ...path] = st.target.map((t) => t.name);
  if (path.length === 0) {
    if (!scope.set(head, value)) throw new RuntimeFault(`cannot assign to "${head}"`, st.range);
    return;
  }
  const param = step.workflow.params.find((p) => p.name === head);
  if (!param || param.type.kind !== "entity" || path.length !== 1) {
    throw new RuntimeFault(`cannot assign to "${st.target.map((t) => t.name).join(".")}"`, st.range);
  }
  const row = step.entities.get(head)!;
  const field = step.workflow.entities[row.entity].fields[path[0]];
  if (value === null && !field.type.optional) throw new RuntimeFault(`null assigned to required field "${head}.${path[0]}"`, st.range);
  if (typeof value === "string") {
    if (field.maxLength !== null && value.length > field.maxLength) {
      throw new RuntimeFault(`"${head}.${path[0]}" takes at most ${field.maxLength} characters (@maxLength), got ${value.length}`, st.range);
    }
    if (field.minLength !== null && value.length < field.minLength) {
      throw new RuntimeFault(`"${head}.${path[0]}" takes at least ${field.minLength} characters (@minLength), got ${value.length}`, st.range);
    }
  }
  row.data[path[0]] = value;
  step.markEntityDirty(head);
}
