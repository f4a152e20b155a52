/**
 * The language server's answers, as pure functions of an Analysis (issue 21 item 2): diagnostics,
 * hover, definition, references, rename edits, the outline, formatting and quick fixes. The
 * protocol wiring is server.ts; completion is completion.ts.
 */
import { ANNOTATIONS } from "./annotations.js";
import {
  CodeActionKind, DiagnosticSeverity, DocumentSymbol, MarkupKind, SymbolKind as LspSymbolKind,
  type CodeAction, type Diagnostic as LspDiagnostic, type Hover, type Location, type Position, type TextEdit, type WorkspaceEdit,
} from "vscode-languageserver";
import { BUILTINS } from "../../lang/families/builtins.js";
import { Codes } from "../../lang/codes.js";
import type { Diagnostic } from "../../lang/diagnostics.js";
import { format, formatParsed } from "../format.js";
import type { FlowSymbol, SymbolKind } from "../symbols.js";
import type { Analysis } from "./analysis.js";
import { diagnosticDescription, diagnosticHref } from "./docs.js";
import { timerHover } from "./timer-hover.js";
import { nearNames } from "../../lang/near-names.js";

/** The diagnostics of `slotflow check`, one for one: code, severity, message, range, and a link to the code's entry. */
export function diagnostics(a: Analysis): LspDiagnostic[] {
  return a.result.diagnostics.map((d) => toLsp(a, d));
}

function toLsp(a: Analysis, d: Diagnostic): LspDiagnostic {
  return {
    range: a.range(d.range),
    severity: d.severity === "error" ? DiagnosticSeverity.Error : DiagnosticSeverity.Warning,
    code: d.code,
    codeDescription: { href: diagnosticHref(d.code) },
    source: "slotflow",
    message: d.message,
  };
}

const KIND_WORDS: Record<SymbolKind, string> = {
  workflow: "workflow", state: "state", event: "event", entity: "entity", field: "field", eventParam: "event parameter",
  param: "workflow parameter", alias: "slot", let: "local", handlerParam: "handler parameter", fanOut: "fan-out variable",
  principal: "principal parameter", milestone: "milestone",
};

/** Hover of a slot alias's members, after `x.` (docs/language.md; `count` and `TaskUrl()` v0.4). */
const SLOT_MEMBERS: Record<string, { signature: string; text: string }> = {
  done: { signature: "x.done: bool", text: "Every slot of x is completed — or, with `Quorum: k`, k of its elements are." },
  count: { signature: "x.count: int", text: "How many slots of x (elements, when fanned out) are completed." },
  CallbackUrl: {
    signature: "x.CallbackUrl(): string",
    text: "Mints x's single-use link and returns its URL once. On a fanned-out slot only inside its `each { … }`, where it mints that element's link.",
  },
  TaskUrl: {
    signature: "x.TaskUrl(): string",
    text: "The URL of x's task page in the inbox (`/inbox/tasks/{runId}/{alias}`, `?element=N` inside `each`). Not a credential: it may go in any mail; allowed on a closed slot too.",
  },
  // v0.5 calls (docs/language.md section 16)
  error: {
    signature: "x.error: string?",
    text: "Of a call: why it failed, in words (`HTTP 422 from credit-bureau`, `timeout after 10s (5 attempts)`); a `string` inside `on x.failed`, null until the call failed elsewhere.",
  },
  status: { signature: "x.status: int?", text: "Of a call: the last HTTP status it got; null when none." },
  attempts: { signature: "x.attempts: int", text: "Of a call: the attempts made so far." },
};

/** Hover of the v0.5 call and result words (docs/language.md section 16). */
const CALL_WORDS: Record<string, { signature: string; text: string; follows: RegExp }> = {
  call: {
    signature: "call http \"endpoint\" | task \"type\" | workflow Name as x [returns E] { … }",
    text: "A slot that a machine answers: the call starts after the step that opens the slot commits; its answer completes x through the same path as a deposit (`on x(…)`), a failure runs `on x.failed`, a Deadline `on x.expired`.",
    follows: /^\s+(http|task|workflow)\b/,
  },
  returns: {
    signature: "returns E",
    text: "After a call's alias: the event whose parameters the answer carries (read by name; extra properties dropped). After a workflow's parameters: the run's result, set by `result { … }`.",
    follows: /^\s+[A-Za-z_]/,
  },
  result: {
    signature: "result { name: expr, … }",
    text: "Sets the run's result: the fields of the workflow's `returns` event. The last one that runs before the run finishes counts; a finished run's result is `{state, …fields}`.",
    follows: /^\s*\{/,
  },
  failed: {
    signature: "on x.failed",
    text: "Runs when call x fails for good (attempts spent, a non-retryable status, an answer not of the declared shape, a child run cancelled); `x.error` and `x.status` say why.",
    follows: /^/,
  },
};

/** Hover of the v0.4 settings `Quorum: k` and `each { … }`, and the v0.5 call settings. */
const SETTING_HOVER: Record<string, { signature: string; text: string; follows: RegExp }> = {
  Method: { signature: "Method: GET | POST | PUT | PATCH | DELETE", text: "`call http` only: the request's method (default POST; no body for GET and DELETE).", follows: /^\s*:/ },
  Path: { signature: "Path: string", text: "`call http` only: a path and query appended to the endpoint's URL (it never changes the host).", follows: /^\s*:/ },
  Input: { signature: "Input { name: expr, … }", text: "A call's JSON object: the request body, the task's input, or the child run's input (checked like a start when the call starts).", follows: /^\s*\{/ },
  Timeout: { signature: "Timeout: duration", text: "Per attempt (http default 30s; task 5m, its lease). Not on `call workflow`: bound a child with Deadline.", follows: /^\s*:/ },
  Attempts: { signature: "Attempts: int", text: "Attempts in all, at least 1 (default 3; workflow 1). Retries back off exponentially with full jitter, never past Deadline.", follows: /^\s*:/ },
  Quorum: {
    signature: "Quorum: int",
    text: "Only on a fanned-out slot: it is done once this many elements are completed; the others are then cancelled, their links dead (`quorum-reached`). 1 ≤ k ≤ the elements, checked when the slots are created.",
    follows: /^\s*:/,
  },
  each: {
    signature: "each { … }",
    text: "Only on a fanned-out slot: runs once per element when its slot is created (after the state's `enter`), the fan-out variable in scope; there the alias stands for that element's slot, so `x.CallbackUrl()` and `x.TaskUrl()` mint or name it.",
    follows: /^\s*\{/,
  },
};

/** How a symbol's declaration reads (hover's code block). At most 30 lines of source. */
export function declarationText(a: Analysis, sym: FlowSymbol): string {
  const src = (text: string) => text.split(/\r?\n|\r/).slice(0, 30).join("\n");
  switch (sym.kind) {
    case "state": {
      const text = a.slice(sym.full);
      return src(text.slice(0, text.includes("{") ? text.indexOf("{") : text.length).trim());
    }
    case "alias":
      return src(a.slice(sym.full));
    case "event":
    case "entity":
      return src(a.slice(sym.full));
    case "field":
      return `${sym.container}.${a.slice(sym.full)}`;
    case "eventParam":
      return `${sym.container}(… ${a.slice(sym.full)} …)`;
    case "let":
      return src(a.slice(sym.full));
    default:
      return sym.type ? `${sym.name}: ${a.slice(sym.type.range)}` : sym.name;
  }
}

/** Hover: the declaration of the name under the cursor, and every diagnostic there with its description. */
export function hover(a: Analysis, pos: Position): Hover | null {
  const offset = a.offset(pos);
  const parts: string[] = [];
  let range: { start: Position; end: Position } | undefined;
  const occ = a.index?.at(offset) ?? null;
  if (occ) {
    parts.push(`(${KIND_WORDS[occ.symbol.kind]}) \`${occ.symbol.name}\`\n\n\`\`\`flow\n${declarationText(a, occ.symbol)}\n\`\`\``);
    range = a.range(occ.range);
  } else {
    // A builtin function: its signature (src/lang/families/builtins.ts).
    let s = offset;
    while (s > 0 && /[A-Za-z0-9_]/.test(a.text[s - 1])) s--;
    let e = offset;
    while (e < a.text.length && /[A-Za-z0-9_]/.test(a.text[e])) e++;
    const word = a.text.slice(s, e);
    const builtin = BUILTINS.get(word);
    const slotMember = SLOT_MEMBERS[word];
    const setting = SETTING_HOVER[word];
    const callWord = Object.hasOwn(CALL_WORDS, word) ? CALL_WORDS[word] : undefined;
    const timerWord = timerHover(a.ast, offset, word);
    if (timerWord) {
      parts.push(`(${timerWord.kind}) \`${timerWord.signature}\`\n\n${timerWord.text}`);
      range = { start: a.position(s), end: a.position(e) };
    } else if (builtin && /^\s*\(/.test(a.text.slice(e)) && a.text[s - 1] !== ".") {
      parts.push(`(builtin) \`${builtin.name}\`\n\n\`\`\`flow\n${builtin.signature}\n\`\`\`${builtin.matcher ? "\n\nA matcher: only in `Candidates`." : ""}`);
      range = { start: a.position(s), end: a.position(e) };
    } else if (slotMember && /\.\s*$/.test(a.text.slice(Math.max(0, s - 8), s))) {
      parts.push(`(slot member) \`${slotMember.signature}\`\n\n${slotMember.text}`);
      range = { start: a.position(s), end: a.position(e) };
    } else if (ANNOTATIONS[word] && a.text[s - 1] === "@") {
      // an annotation's name (v0.5: the constraints too)
      parts.push(`(annotation) \`${ANNOTATIONS[word]!.signature}\`\n\n${ANNOTATIONS[word]!.text}`);
      range = { start: a.position(s - 1), end: a.position(e) };
    } else if (setting && setting.follows.test(a.text.slice(e, e + 8))) {
      parts.push(`(slot setting) \`${setting.signature}\`\n\n${setting.text}`);
      range = { start: a.position(s), end: a.position(e) };
    } else if (callWord && callWord.follows.test(a.text.slice(e, e + 12)) && (word !== "failed" || /\.\s*$/.test(a.text.slice(Math.max(0, s - 8), s)))) {
      parts.push(`(keyword) \`${callWord.signature}\`\n\n${callWord.text}`);
      range = { start: a.position(s), end: a.position(e) };
    }
  }
  for (const d of a.result.diagnostics) {
    if (d.range.start.offset <= offset && offset <= Math.max(d.range.end.offset, d.range.start.offset + 1)) {
      const description = diagnosticDescription(d.code);
      parts.push(`**${d.code}** (${d.severity}): ${d.message}${description ? `\n\n${description}` : ""}\n\n[${d.code} in docs/diagnostics.md](${diagnosticHref(d.code)})`);
    }
  }
  if (parts.length === 0) return null;
  return { contents: { kind: MarkupKind.Markdown, value: parts.join("\n\n---\n\n") }, ...(range ? { range } : {}) };
}

export function definition(a: Analysis, pos: Position): Location | null {
  const occ = a.index?.at(a.offset(pos)) ?? null;
  if (!occ) return null;
  return { uri: a.uri, range: a.range(occ.symbol.decl) };
}

export function references(a: Analysis, pos: Position, includeDeclaration: boolean): Location[] {
  const occ = a.index?.at(a.offset(pos)) ?? null;
  if (!occ || !a.index) return [];
  return a.index.occurrencesOf(occ.symbol).filter((o) => includeDeclaration || !o.isDecl).map((o) => ({ uri: a.uri, range: a.range(o.range) }));
}

const RESERVED = new Set([
  "workflow", "entity", "event", "state", "initial", "terminal", "subscribe", "as", "for", "in", "enter", "on", "when", "default",
  "milestone", "let", "send", "to", "drop", "if", "else", "map", "true", "false", "null", "after", "every", "webhook", "message",
]);

/** The symbol a rename at `pos` renames, or a reason it cannot. */
export function renameTarget(a: Analysis, pos: Position): { symbol: FlowSymbol; range: Position[] } | { refused: string } {
  if (!a.index) return { refused: "the file does not parse: fix its syntax errors first" };
  const occ = a.index.at(a.offset(pos));
  if (!occ) return { refused: "there is no name here that can be renamed" };
  if (occ.symbol.kind === "workflow" || occ.symbol.kind === "milestone") {
    return { refused: `a ${KIND_WORDS[occ.symbol.kind]}'s name identifies it to deployed runs and the API; rename it by deploying a new workflow` };
  }
  const r = a.range(occ.range);
  return { symbol: occ.symbol, range: [r.start, r.end] };
}

/** The edits that rename `symbol` to `newName`, or a reason they would be wrong. */
export function renameEdits(a: Analysis, symbol: FlowSymbol, newName: string): WorkspaceEdit | { refused: string } {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(newName)) return { refused: `'${newName}' is not a name: letters, digits and _, not starting with a digit` };
  if (RESERVED.has(newName)) return { refused: `'${newName}' is a keyword` };
  const clash = a.index!.symbols
    .concat(a.index!.symbols.flatMap((s) => s.children))
    .find((s) => s !== symbol && s.kind === symbol.kind && s.name === newName && s.container === symbol.container);
  if (clash) return { refused: `there is already a ${KIND_WORDS[clash.kind]} named '${newName}'` };
  const edits: TextEdit[] = a.index!.occurrencesOf(symbol).map((o) => ({ range: a.range(o.range), newText: newName }));
  return { changes: { [a.uri]: edits } };
}

const OUTLINE_KINDS: Record<SymbolKind, LspSymbolKind> = {
  workflow: LspSymbolKind.Module, state: LspSymbolKind.Class, event: LspSymbolKind.Event, entity: LspSymbolKind.Struct,
  field: LspSymbolKind.Field, eventParam: LspSymbolKind.TypeParameter, param: LspSymbolKind.Variable, alias: LspSymbolKind.Property,
  let: LspSymbolKind.Variable, handlerParam: LspSymbolKind.Variable, fanOut: LspSymbolKind.Variable, principal: LspSymbolKind.Variable,
  milestone: LspSymbolKind.Constant,
};

/** The outline: the workflow, its parameters, entities (fields), events (parameters), states (slots, milestones). */
export function documentSymbols(a: Analysis): DocumentSymbol[] {
  const good = a.index;
  if (!good) return [];
  const one = (s: FlowSymbol): DocumentSymbol =>
    DocumentSymbol.create(s.name, KIND_WORDS[s.kind], OUTLINE_KINDS[s.kind], a.range(s.full), a.range(s.decl), s.children.map(one));
  return good.symbols.map(one);
}

/**
 * The whole document in the canonical layout (one edit), none when it is already, or null when it
 * does not parse (or, an internal fault, its layout would not mean the same). Issue 21 item 2: the
 * input is neither lexed nor parsed again and not checked (the analysis's parse is the formatter's:
 * format.ts formatParsed), the output's meaning is proved on the parser's input (FormatVerify
 * "parser-input") rather than by a second compile, and the answer is kept per document version.
 */
export function formatting(a: Analysis): TextEdit[] | null {
  return a.formattingEdits(() => {
    const r = a.parsed ? formatParsed(a.text, a.parsed) : format(a.text, a.result, { verify: "parser-input" });
    if (!r.ok) return null;
    if (!r.changed) return [];
    return [{ range: { start: { line: 0, character: 0 }, end: a.position(a.text.length) }, newText: r.text }];
  });
}

/** Names near a misspelled one (moved to src/lang/near-names.ts, shared with the run-input check). */
export { nearNames };

/**
 * Quick fixes for the diagnostics in `range`: an unknown state (FLOW103) or slot alias (FLOW104)
 * with a near name; a `map event` that lacks parameters of its target event (FLOW321) gets them
 * added, each set from the previous parameter of the same name when there is one.
 */
export function codeActions(a: Analysis, range: { start: Position; end: Position }): CodeAction[] {
  const good = a.good;
  if (!good?.index || !good.ast) return [];
  const start = a.offset(range.start);
  const end = a.offset(range.end);
  const actions: CodeAction[] = [];
  for (const d of a.result.diagnostics) {
    if (d.range.end.offset < start || d.range.start.offset > end) continue;
    const written = a.slice(d.range);
    let candidates: string[] = [];
    if (d.code === Codes.UnknownState) candidates = good.index.symbols.filter((s) => s.kind === "state").map((s) => s.name);
    // v0.5: `returns` naming no event; a `result` field that is no parameter of the returns event
    else if (d.code === Codes.UnknownReturns) candidates = good.index.symbols.filter((s) => s.kind === "event").map((s) => s.name);
    else if (d.code === Codes.ResultFields && good.ast.returns) {
      const event = good.index.find("event", good.ast.returns.name);
      candidates = (event?.children ?? []).map((p) => p.name).filter((n) => n !== "state");
    } else if (d.code === Codes.CallMethod) {
      // `Method: post` → `POST`
      const upper = written.replace(/^"|"$/g, "").toUpperCase();
      if (["GET", "POST", "PUT", "PATCH", "DELETE"].includes(upper) && upper !== written) {
        actions.push({
          title: `Change '${written}' to '${upper}'`,
          kind: CodeActionKind.QuickFix,
          diagnostics: [toLsp(a, d)],
          isPreferred: true,
          edit: { changes: { [a.uri]: [{ range: a.range(d.range), newText: upper }] } },
        });
      }
    }
    else if (d.code === Codes.UnknownAlias || d.code === Codes.AliasNotInScope) {
      const state = good.index.stateAt(d.range.start.offset);
      candidates = (state?.children ?? []).filter((s) => s.kind === "alias").map((s) => s.name);
    }
    for (const name of nearNames(written, candidates)) {
      actions.push({
        title: `Change '${written}' to '${name}'`,
        kind: CodeActionKind.QuickFix,
        diagnostics: [toLsp(a, d)],
        isPreferred: actions.length === 0,
        edit: { changes: { [a.uri]: [{ range: a.range(d.range), newText: name }] } },
      });
    }
    if (d.code === Codes.MapMissingParam) {
      const fix = mapMissingFix(a, d);
      if (fix) actions.push(fix);
    }
  }
  return actions;
}

function mapMissingFix(a: Analysis, d: Diagnostic): CodeAction | null {
  const ast = a.result.ast;
  const map = ast?.maps.find((m) => m.range.start.offset <= d.range.start.offset && d.range.start.offset <= m.range.end.offset);
  const target = ast?.events.find((e) => e.name.name === map?.to.name);
  if (!map || !target) return null;
  const given = new Set(map.args.map((x) => x.name.name));
  const missing = target.params.filter((p) => !given.has(p.name.name));
  if (missing.length === 0) return null;
  const previous = new Set(map.fromParams.map((p) => p.name.name));
  const value = (p: (typeof missing)[number]) => {
    if (previous.has(p.name.name)) return p.name.name;
    if (p.type.optional) return "null";
    const byType: Record<string, string> = { bool: "false", int: "0", decimal: "0.0", string: '""', duration: "0s" };
    return byType[p.type.name] ?? "null";
  };
  const text = missing.map((p) => `${p.name.name}: ${value(p)}`).join(", ");
  // Insert before the closing parenthesis of `to E2(…)`: the map's last character.
  const close = a.text.lastIndexOf(")", map.range.end.offset);
  if (close < 0) return null;
  const at = a.position(close);
  return {
    title: `Map the missing parameter${missing.length > 1 ? "s" : ""} of ${target.name.name}: ${missing.map((p) => p.name.name).join(", ")}`,
    kind: CodeActionKind.QuickFix,
    diagnostics: [toLsp(a, d)],
    edit: { changes: { [a.uri]: [{ range: { start: at, end: at }, newText: `${map.args.length > 0 ? ", " : ""}${text}` }] } },
  };
}
