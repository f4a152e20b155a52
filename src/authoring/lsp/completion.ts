/**
 * Completion that knows where it is (issue 21 item 2). The place is read from the current text —
 * the line before the cursor and the `{ … }` blocks that enclose it, from the lexer's tokens — so
 * it works while the file is broken mid-edit; the names offered come from the last analysis that
 * parsed:
 *
 * | where                                   | offers                                     |
 * |-----------------------------------------|--------------------------------------------|
 * | after `->`                              | the states                                 |
 * | after `on`, `drop slot`, in `After:`    | the slot aliases of the enclosing state    |
 * | `subscribe E(` …                        | E's parameter names, in order              |
 * | after `subscribe`, `map event`, `to`    | the events                                 |
 * | a line of a `subscribe … { }` block      | the setting names (`Candidates:` …, `each { }`, timers `after`/`every`: issue 43 item 3) |
 * | in `send message … { }`                 | its fields (`text:`, `link:`, `label:`, `answer:`) |
 * | after `answer:` in `send message … { }` | the slot aliases of the enclosing state (v0.4) |
 * | after `x.`                              | x's fields (entity), `done`/`count`/`CallbackUrl()`/`TaskUrl()` (slot), `done`/`count`/`error`/`status`/`attempts` (a call's slot, v0.5), a principal's members |
 * | after `on x.`                           | `expired`, and `failed` for a call (v0.5)  |
 * | after `call`                            | `http "…"`, `task "…"`, `workflow …` (v0.5) |
 * | after `returns`                         | the events (v0.5)                          |
 * | a line of a `call … { }` block          | the call settings (`Method:` … `Input { }` …) (v0.5), timers `after`/`every` |
 * | after `Method:`                         | GET, POST, PUT, PATCH, DELETE (v0.5)       |
 * | after `:` in a declaration, in `list<`  | the types (scalars and entities)           |
 * | after `@`                               | the annotations: `@label` … and the constraints `@min` … `@oneOf` (v0.5) |
 * | elsewhere                               | keywords, builtins, the names in scope     |
 */
import { CompletionItemKind, InsertTextFormat, type CompletionItem, type Position } from "vscode-languageserver";
import type { IToken } from "chevrotain";
import { BUILTINS } from "../../lang/families/builtins.js";
import { lexWithComments } from "../format.js";
import type { FlowSymbol } from "../symbols.js";
import type { Analysis } from "./analysis.js";
import { ANNOTATIONS } from "./annotations.js";

const KEYWORDS = [
  "workflow", "entity", "event", "state", "initial", "terminal", "subscribe", "as", "for", "each", "in", "enter", "on", "when",
  "default", "milestone", "let", "send", "email", "to", "drop", "slot", "if", "else", "map", "true", "false", "null", "expired",
  // v0.3: timers (issue 19) and deliveries through endpoints (issue 18)
  "after", "every", "webhook", "message",
  // v0.5: calls and results
  "call", "http", "task", "returns", "result", "failed",
];
/** The settings of a `call … { }` block (v0.5; docs/language.md section 16). */
const CALL_SETTINGS: { name: string; detail: string; block?: true }[] = [
  { name: "Method", detail: "call http: GET, POST, PUT, PATCH or DELETE (default POST)" },
  { name: "Path", detail: "call http: string appended to the endpoint's URL" },
  { name: "Input", detail: "the JSON object sent: Input { name: expr, … }", block: true },
  { name: "Timeout", detail: "duration per attempt (http 30s, task 5m)" },
  { name: "Attempts", detail: "int ≥ 1, attempts in all (default 3)" },
  { name: "After", detail: "slot setting" },
  { name: "Deadline", detail: "slot setting" },
  { name: "Quorum", detail: "int: a fanned-out call is done once this many elements are answered" },
];
const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"];
const SETTINGS = ["Candidates", "Requires", "After", "Deadline", "Title", "Intro", "Quorum", "Forwardable", "Language"];
/** Completion details of settings that need a word more than "slot setting". */
const SETTING_DETAIL: Record<string, string> = { Quorum: "int: a fanned-out slot is done once this many elements are completed", Language: "string: the responder's language, a BCP 47 tag (v0.5)" };
/** The fields of `send message` (language reference "Delivering through endpoints"; `answer` added for v0.4). */
const MESSAGE_FIELDS = ["text", "link", "label", "answer"];
const SCALARS = ["bool", "int", "decimal", "string", "datetime", "date", "duration", "principal", "list"];

interface Block {
  /** The code tokens before `{` back to the previous line, `{`, `}` or `;`. */
  head: IToken[];
}

/** The `{ … }` blocks enclosing `offset`, outermost first. */
function enclosingBlocks(text: string, offset: number): Block[] {
  const stack: Block[] = [];
  let head: IToken[] = [];
  for (const t of lexWithComments(text.slice(0, offset))) {
    const n = t.tokenType.name;
    if (n === "LineComment" || n === "BlockComment") continue;
    if (n === "LCurly") {
      stack.push({ head });
      head = [];
    } else if (n === "RCurly") {
      stack.pop();
      head = [];
    } else if (n === "Newline" || n === "Semi") {
      head = [];
    } else head.push(t);
  }
  return stack;
}

export function completion(a: Analysis, pos: Position): CompletionItem[] {
  const offset = a.offset(pos);
  const good = a.good;
  const index = good?.index ?? null;
  const lineStart = a.lines.lineStarts[Math.min(pos.line, a.lines.lineStarts.length - 1)] ?? 0;
  const before = a.text.slice(lineStart, offset);
  const blocks = enclosingBlocks(a.text, offset);
  const stateBlock = [...blocks].reverse().find((b) => b.head.some((t) => t.image === "state"));
  const stateName = stateBlock ? stateBlock.head[stateBlock.head.findIndex((t) => t.image === "state") + 1]?.image : undefined;
  const inner = blocks.at(-1);
  const symbols = (kind: string) => (index?.symbols ?? []).filter((s) => s.kind === kind);
  const item = (label: string, kind: CompletionItemKind, detail?: string): CompletionItem => ({ label, kind, ...(detail ? { detail } : {}) });
  // issue 43 item 3: timers on a slot, per open element
  const slotTimers: CompletionItem[] = [
    { ...item("after", CompletionItemKind.Keyword, "a timer on the slot: runs once, D after it (each element) opens"), insertText: "after ${1:1d} {\n\t$0\n}", insertTextFormat: InsertTextFormat.Snippet },
    { ...item("every", CompletionItemKind.Keyword, "a timer on the slot: runs every P while it (each element) is open"), insertText: "every ${1:2d} {\n\t$0\n}", insertTextFormat: InsertTextFormat.Snippet },
  ];
  const aliases = (): CompletionItem[] => {
    const state = symbols("state").find((s) => s.name === stateName);
    return (state?.children ?? []).filter((s) => s.kind === "alias").map((s) => item(s.name, CompletionItemKind.Property, `slot of ${s.container}`));
  };

  if (/->\s*[A-Za-z_0-9]*$/.test(before)) return symbols("state").map((s) => item(s.name, CompletionItemKind.Class, "state"));
  // v0.5 calls and results
  const onDot = /^\s*on\s+([A-Za-z_][A-Za-z_0-9]*)\s*\.\s*[A-Za-z_]*$/.exec(before);
  if (onDot) {
    const outcomes = [item("expired", CompletionItemKind.Keyword, "runs when the slot's Deadline passes")];
    if (isCallAlias(a, stateName, onDot[1])) outcomes.push(item("failed", CompletionItemKind.Keyword, "runs when the call fails for good (x.error, x.status)"));
    return outcomes;
  }
  if (/^\s*call\s+[A-Za-z_]*$/.test(before)) {
    return [
      { ...item("http", CompletionItemKind.Keyword, "an endpoint of kind http"), insertText: 'http "$1" as $2', insertTextFormat: InsertTextFormat.Snippet },
      { ...item("task", CompletionItemKind.Keyword, "a task type served by your workers"), insertText: 'task "$1" as $2', insertTextFormat: InsertTextFormat.Snippet },
      { ...item("workflow", CompletionItemKind.Keyword, "a deployed workflow: a child run"), insertText: "workflow $1 as $2", insertTextFormat: InsertTextFormat.Snippet },
    ];
  }
  if (/\breturns\s+[A-Za-z_0-9]*$/.test(before)) return symbols("event").map((s) => item(s.name, CompletionItemKind.Event, "event"));
  if (inner?.head[0]?.image === "call" && /\bMethod\s*:\s*[A-Za-z]*$/.test(before)) return HTTP_METHODS.map((m) => item(m, CompletionItemKind.EnumMember, "HTTP method"));
  if (inner?.head[0]?.image === "call" && /^\s*[A-Za-z_]*$/.test(before)) {
    return [
      ...CALL_SETTINGS.map((s) => ({
        ...item(s.name, CompletionItemKind.Property, s.detail),
        insertText: s.block ? `${s.name} { $0 }` : `${s.name}: `,
        ...(s.block ? { insertTextFormat: InsertTextFormat.Snippet } : {}),
      })),
      { ...item("each", CompletionItemKind.Property, "runs once per element of a fanned-out call"), insertText: "each {\n\t$0\n}", insertTextFormat: InsertTextFormat.Snippet },
      ...slotTimers,
    ];
  }
  if (/^\s*on\s+[A-Za-z_0-9]*$/.test(before) || /\bdrop\s+slot\s+[A-Za-z_0-9]*$/.test(before) || /^\s*After\s*:[\sA-Za-z_0-9,]*$/.test(before)) {
    return aliases();
  }
  const sub = /\bsubscribe\s+([A-Za-z_][A-Za-z_0-9]*)\s*\(([^)]*)$/.exec(before);
  if (sub) {
    const event = index?.find("event", sub[1]);
    const written = sub[2].split(",").length - 1;
    return (event?.children ?? []).map((p, i) => ({ ...item(p.name, CompletionItemKind.TypeParameter, `parameter ${i + 1} of ${sub[1]}`), sortText: String(i).padStart(3, "0"), preselect: i === written }));
  }
  if (/\b(subscribe|map\s+event)\s+[A-Za-z_0-9]*$/.test(before) || /\bmap\s+event\b.*\bto\s+[A-Za-z_0-9]*$/.test(before)) {
    return symbols("event").map((s) => item(s.name, CompletionItemKind.Event, "event"));
  }
  if (inner?.head[0]?.image === "subscribe" && /^\s*[A-Za-z_]*$/.test(before)) {
    return [
      ...SETTINGS.map((s) => ({ ...item(s, CompletionItemKind.Property, SETTING_DETAIL[s] ?? "slot setting"), insertText: `${s}: ` })),
      // v0.4 Many responders: the one setting with a block
      { ...item("each", CompletionItemKind.Property, "runs once per element of a fanned-out slot"), insertText: "each {\n\t$0\n}", insertTextFormat: InsertTextFormat.Snippet },
      ...slotTimers,
    ];
  }
  const inMessage = inner?.head[0]?.image === "send" && inner.head[1]?.image === "message";
  if (inMessage && /\banswer\s*:\s*[A-Za-z_0-9]*$/.test(before)) return aliases();
  if (inMessage && /(^|[{,])\s*[A-Za-z_]*$/.test(before)) {
    return MESSAGE_FIELDS.map((f) => ({ ...item(f, CompletionItemKind.Property, "field of send message"), insertText: `${f}: ` }));
  }
  // after `@` on an event parameter: the page annotations and the constraints (v0.5)
  if (/@[A-Za-z_0-9]*$/.test(before) && !/"[^"]*@[A-Za-z_0-9]*$/.test(before)) {
    return Object.entries(ANNOTATIONS).map(([name, d]) => ({
      ...item(name, CompletionItemKind.Property, d.signature),
      documentation: d.text,
      insertText: d.snippet,
      insertTextFormat: InsertTextFormat.Snippet,
    }));
  }
  const member = /((?:[A-Za-z_][A-Za-z_0-9]*\s*\.\s*)+)[A-Za-z_0-9]*$/.exec(before);
  if (member) return members(a, member[1].split(".").map((s) => s.trim()).filter(Boolean), offset, stateName);
  const inDecl = inner?.head[0]?.image === "entity" || /\b(workflow|event|map\s+event)\s+[A-Za-z_0-9]*\s*\([^)]*$/.test(before);
  if ((inDecl && /:\s*[A-Za-z_0-9]*$/.test(before)) || /\blist\s*<\s*[A-Za-z_0-9]*$/.test(before)) {
    return [...SCALARS.map((s) => item(s, CompletionItemKind.TypeParameter, "type")), ...symbols("entity").map((s) => item(s.name, CompletionItemKind.Struct, "entity"))];
  }

  const out: CompletionItem[] = KEYWORDS.map((k) => item(k, CompletionItemKind.Keyword));
  for (const b of BUILTINS.values()) {
    out.push({ ...item(b.name, CompletionItemKind.Function, b.signature), insertText: `${b.name}($1)`, insertTextFormat: InsertTextFormat.Snippet });
  }
  for (const s of symbols("param")) out.push(item(s.name, CompletionItemKind.Variable, "workflow parameter"));
  if (index) {
    // Locals, handler parameters and fan-out variables whose declaration precedes the cursor in the enclosing state.
    const state = index.find("state", stateName ?? "");
    for (const o of index.occurrences) {
      const k = o.symbol.kind;
      if (!o.isDecl || !(k === "let" || k === "handlerParam" || k === "fanOut")) continue;
      if (state && o.range.start.offset >= state.full.start.offset && o.range.end.offset <= Math.min(offset, state.full.end.offset)) {
        out.push(item(o.symbol.name, CompletionItemKind.Variable, k === "let" ? "local" : k === "fanOut" ? "fan-out variable" : "handler parameter"));
      }
    }
  }
  out.push(...aliases());
  const seen = new Set<string>();
  return out.filter((c) => !seen.has(c.label) && (seen.add(c.label), true));
}

/** After `a.b.`: what `a.b` has, resolved through declared types. */
function members(a: Analysis, path: string[], offset: number, stateName: string | undefined): CompletionItem[] {
  const index = a.good?.index;
  if (!index) return [];
  const [head, ...rest] = path;
  const state = index.find("state", stateName ?? "");
  if (rest.length === 0 && isCallAlias(a, stateName, head)) {
    // v0.5: a call's slot has no link and no task page
    return [
      { label: "done", kind: CompletionItemKind.Property, detail: "bool: the call is answered" },
      { label: "count", kind: CompletionItemKind.Property, detail: "int: how many of its calls (elements) are answered" },
      { label: "error", kind: CompletionItemKind.Property, detail: "string?: why the call failed (a string inside on x.failed)" },
      { label: "status", kind: CompletionItemKind.Property, detail: "int?: the last HTTP status" },
      { label: "attempts", kind: CompletionItemKind.Property, detail: "int: attempts made so far" },
    ];
  }
  if (rest.length === 0 && state?.children.some((s) => s.kind === "alias" && s.name === head)) {
    return [
      { label: "done", kind: CompletionItemKind.Property, detail: "bool: the slot is completed" },
      { label: "count", kind: CompletionItemKind.Property, detail: "int: how many of its slots (elements) are completed" },
      { label: "CallbackUrl", kind: CompletionItemKind.Method, detail: "string: mints the slot's single-use link", insertText: "CallbackUrl()" },
      { label: "TaskUrl", kind: CompletionItemKind.Method, detail: "string: the task page's URL in the inbox (not a credential)", insertText: "TaskUrl()" },
    ];
  }
  // The nearest declaration of `head` before the cursor (a local or parameter), else a workflow parameter.
  let sym: FlowSymbol | undefined;
  for (const o of index.occurrences) {
    if (o.isDecl && o.symbol.name === head && o.range.start.offset < offset && (o.symbol.type || o.symbol.kind === "principal")) sym = o.symbol;
  }
  sym ??= index.find("param", head);
  let type = sym?.type ?? null;
  if (type?.name === "principal" || sym?.kind === "principal") {
    const props: CompletionItem[] = ["id", "email", "roles"].map((m) => ({ label: m, kind: CompletionItemKind.Property, detail: "principal" }));
    return [...props, { label: "hasRole", kind: CompletionItemKind.Method, detail: "hasRole(string): bool" }];
  }
  for (const p of rest) type = type && type.name !== "list" ? index.find("field", p, type.name)?.type ?? null : null;
  if (!type || type.name === "list") return [];
  const entity = index.find("entity", type.name);
  return (entity?.children ?? []).map((f) => ({ label: f.name, kind: CompletionItemKind.Field, detail: f.type ? a.good!.slice(f.type.range) : undefined }));
}

/** Whether `alias` is declared by a `call` in state `stateName` (v0.5), per the last tree that parsed. */
function isCallAlias(a: Analysis, stateName: string | undefined, alias: string): boolean {
  const state = a.good?.ast?.states.find((s) => s.name.name === stateName);
  return state?.members.some((m) => m.kind === "call" && m.alias.name === alias) ?? false;
}
