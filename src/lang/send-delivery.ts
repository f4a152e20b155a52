/**
 * `send webhook to "NAME" { type: …, field: … }` and `send message to "NAME" { text: …, link: …,
 * label: … }` (issue 18; language.md §10; docs/language.md "Delivering through endpoints"): the
 * shape the grammar reads loosely (`send WORD to expr { name: expr … }`, shared with `send email`)
 * settled into statements, with the syntax diagnostics found while doing so, and their type rule.
 *
 * Syntax rules (FLOW030 DeliveryFields, FLOW031 EndpointNotLiteral):
 * - the endpoint is a string literal naming an endpoint set by an operator (never a URL in source);
 * - a webhook needs `type`; its other fields (any names, each once) become the event's `data`;
 * - a message needs `text`, and may have `link`, `label` and `answer`, each once; nothing else;
 * - `answer` is a bare slot alias (v0.4 "Answers inside Slack"); that it names a slot of the
 *   enclosing state is the checker's rule (FLOW318 AnswerNotASlot, check-stmt.ts).
 * Type rule: `type`, `text`, `link`, `label` are strings; a webhook's data fields are of any type
 * with a JSON form (not a slot alias or a matcher).
 */
import type { Expr, Ident, Range, SendMessageStmt, SendWebhookStmt } from "./ast.js";
import { Codes } from "./codes.js";

/** What the grammar hands over: the reported-error sink and the parts it read. */
export interface DeliveryParts {
  error(code: string, message: string, range: Range): void;
  word: "webhook" | "message";
  to: Expr;
  fields: { name: Ident; value: Expr }[];
  /** The braces' range (for "missing field" errors) and the statement's. */
  body: Range;
  range: Range;
  /** Stand-in for a missing expression. */
  missing: Expr;
}

/** Builds the statement for `send webhook` / `send message`. */
export function buildDelivery(p: DeliveryParts): SendWebhookStmt | SendMessageStmt {
  let endpoint = { name: "", range: p.to.range };
  if (p.to.kind === "literal" && p.to.type === "string") endpoint = { name: p.to.value, range: p.to.range };
  else p.error(Codes.EndpointNotLiteral, `the endpoint of 'send ${p.word}' must be a string literal naming an endpoint (set with 'slotflow endpoint set')`, p.to.range);
  const seen = new Set<string>();
  const once = (f: { name: Ident }) => {
    if (seen.has(f.name.name)) {
      p.error(Codes.DeliveryFields, `'${f.name.name}' is given twice`, f.name.range);
      return false;
    }
    seen.add(f.name.name);
    return true;
  };
  if (p.word === "webhook") {
    let type: Expr | null = null;
    const data: SendWebhookStmt["data"] = [];
    for (const f of p.fields) {
      if (!once(f)) continue;
      if (f.name.name === "type") type = f.value;
      else data.push(f);
    }
    if (type === null) p.error(Codes.DeliveryFields, "the webhook needs 'type' (the event type, a string)", p.body);
    return { kind: "sendWebhook", endpoint, type: type ?? p.missing, data, range: p.range };
  }
  const got: Record<"text" | "link" | "label", Expr | null> = { text: null, link: null, label: null };
  let answer: Ident | null = null;
  for (const f of p.fields) {
    const name = f.name.name;
    if (name === "answer") {
      if (!once(f)) continue;
      if (f.value.kind === "name") answer = { name: f.value.name, range: f.value.range };
      else p.error(Codes.AnswerNotASlot, "'answer' names a slot of this state by its alias (answer: decision)", f.value.range);
    } else if (name !== "text" && name !== "link" && name !== "label") {
      p.error(Codes.DeliveryFields, `unknown field '${name}': a message has 'text', 'link', 'label' and 'answer'`, f.name.range);
    } else if (once(f)) got[name] = f.value;
  }
  if (got.text === null) p.error(Codes.DeliveryFields, "the message needs 'text'", p.body);
  return { kind: "sendMessage", endpoint, text: got.text ?? p.missing, link: got.link, label: got.label, answer, range: p.range };
}

/** How deep `endpointRefs` walks (a compiled workflow nests statements a few dozen levels at most). */
const MAX_WALK_DEPTH = 256;

/**
 * Every endpoint a compiled workflow (or any part of its syntax tree) names, in source order:
 * deploy warns about names no endpoint has (issue 18 item 2). Walks the plain JSON tree, so it
 * finds statements wherever they sit (handlers, `enter`, arms, timers); depth-bounded.
 */
export function endpointRefs(tree: unknown): { name: string; range: Range }[] {
  const out: { name: string; range: Range }[] = [];
  const walk = (v: unknown, depth: number): void => {
    if (depth > MAX_WALK_DEPTH || v === null || typeof v !== "object") return;
    if (Array.isArray(v)) {
      for (const e of v) walk(e, depth + 1);
      return;
    }
    const node = v as { kind?: unknown; endpoint?: { name: string; range: Range; expr?: unknown } };
    const ref = node.endpoint;
    // a ref with `expr` (built-ins only, src/mcp/builtins.ts) names no endpoint until it runs
    if ((node.kind === "sendWebhook" || node.kind === "sendMessage") && ref && ref.name !== "" && !ref.expr) out.push(ref);
    for (const child of Object.values(v)) walk(child, depth + 1);
  };
  walk(tree, 0);
  return out;
}
