/**
 * Runs the statements of a compiled workflow inside a step, and is the runtime's public module:
 * it re-exports what the engine uses of src/lang/runtime (`evaluate`, `Scope`, `World`,
 * `RuntimeFault`, the value helpers), so the engine imports the language's runtime from here.
 *
 * Expressions evaluate in evaluate.ts (operators and built-ins through src/lang/families, each
 * beside its check). Effects go to the step through its `World` (link mints, mail, deliveries,
 * slot drops, field writes), so nothing touches the database until the step flushes. Any runtime
 * error throws `RuntimeFault`, which aborts the whole step (language reference "Errors"):
 * `@maxLength`/`@minLength` violated, integer overflow or division by zero, minting for a closed
 * slot, mail with a null address, subject or body, a null where a value is required. Reading a
 * member through null gives null, and null in string concatenation is empty text (language
 * reference "Semantics"). Messages name the construct and its line but never a value, so a token
 * cannot leak into them. This module imports nothing of the engine (dependency-cruiser
 * `lang-runtime-inside-lang`).
 */
import type { EndpointRef, Statement } from "../ast.js";
import { evaluate } from "./evaluate.js";
import { isEmailAddress } from "./email-address.js";
import { RuntimeFault } from "./fault.js";
import type { Scope } from "./scope.js";
import { isSpecial, type EntityRef, type Principal } from "./specials.js";
import { CalendarDate, display, Duration, type Value } from "./values.js";
import type { World } from "./world.js";

export { RuntimeFault } from "./fault.js";
export { admits, candidateNames, elementRef, principalName, type Principal } from "./specials.js";
export { display, equals } from "./values.js";
export { evaluate } from "./evaluate.js";
export { Scope } from "./scope.js";
export type { QueuedDelivery, World } from "./world.js";

/** `text` as a JSON string for a message, shortened past 80 characters. */
function quoteForMessage(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}…` : text);
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
