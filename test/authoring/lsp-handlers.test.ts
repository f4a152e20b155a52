/**
 * The language server's handlers without a protocol (issue 21 item 2): each test writes a source
 * with the cursor marked `‸`, builds the Analysis the server builds, and asks one handler.
 */
import { readFileSync } from "node:fs";
import test from "ava";
import { Analysis } from "../../src/authoring/lsp/analysis.js";
import { completion } from "../../src/authoring/lsp/completion.js";
import {
  codeActions, definition, diagnostics, documentSymbols, formatting, hover, references, renameEdits, renameTarget,
} from "../../src/authoring/lsp/features.js";
import { compile } from "../../src/lang/compile.js";
import { ROOT } from "../helpers/root.js";

const URI = "file:///w/expense.flow";
const EXPENSE = readFileSync(`${ROOT}examples/expense-report.flow`, "utf8");

/** The source without its `‸`, and the LSP position of the marker. */
function at(marked: string, previous?: Analysis): { a: Analysis; pos: { line: number; character: number } } {
  const offset = marked.indexOf("‸");
  if (offset < 0) throw new Error("no cursor in the fixture");
  const text = marked.replace("‸", "");
  const before = text.slice(0, offset).split("\n");
  const a = new Analysis(URI, 1, text, previous ?? null);
  return { a, pos: { line: before.length - 1, character: before.at(-1)!.length } };
}

/** `EXPENSE` with the cursor put at the `n`-th occurrence (from 0) of `needle`, shifted by `shift`. */
function inExpense(needle: string, n = 0, shift = 0): string {
  let i = -1;
  for (let k = 0; k <= n; k++) i = EXPENSE.indexOf(needle, i + 1);
  if (i < 0) throw new Error(`no ${needle}`);
  return `${EXPENSE.slice(0, i + shift)}‸${EXPENSE.slice(i + shift)}`;
}

const labels = (items: { label: string }[]) => items.map((c) => c.label);

test("diagnostics are exactly slotflow check's, with code, severity, range and a link to docs/diagnostics.md", (t) => {
  const src = "workflow W\ninitial state A {\n  on nope() -> Nowhere\n}\nterminal state B\n";
  const { a } = at(`‸${src}`);
  const mine = diagnostics(a);
  const check = compile(src).diagnostics;
  t.is(mine.length, check.length);
  mine.forEach((d, i) => {
    t.is(d.code, check[i].code);
    t.is(d.message, check[i].message);
    t.is(d.severity, check[i].severity === "error" ? 1 : 2);
    t.deepEqual(d.range.start, { line: check[i].range.start.line - 1, character: check[i].range.start.column - 1 });
    t.regex(d.codeDescription!.href, new RegExp(`^file:///.*/docs/diagnostics\\.md#${check[i].code.toLowerCase()}$`));
  });
});

test("completion after -> offers the states", (t) => {
  const { a, pos } = at(inExpense("-> Escalated", 0, 3));
  t.deepEqual(labels(completion(a, pos)).sort(), ["Approved", "Escalated", "Rejected", "Submitted"]);
});

test("completion after `on` and in After: offers the slot aliases of the enclosing state", (t) => {
  const on = at(inExpense("on receipts(count)", 0, 3));
  t.deepEqual(labels(completion(on.a, on.pos)).sort(), ["receipts", "review"]);
  const after = at(inExpense("After: receipts", 0, 7));
  t.deepEqual(labels(completion(after.a, after.pos)).sort(), ["receipts", "review"]);
  // In state Escalated only its own alias.
  const esc = at(inExpense("on review(approve, comment)", 1, 3));
  t.deepEqual(labels(completion(esc.a, esc.pos)), ["review"]);
});

test("completion in subscribe E( offers the event's parameter names; in the block, the setting names", (t) => {
  const params = at(inExpense("subscribe Review(approve", 0, 17));
  t.deepEqual(labels(completion(params.a, params.pos)), ["approve", "comment"]);
  const settings = at(inExpense("    Candidates: role(\"manager\"), user", 0, 4));
  t.deepEqual(labels(completion(settings.a, settings.pos)), ["Candidates", "Requires", "After", "Deadline", "Title", "Intro", "Quorum", "Forwardable", "Language", "each", "after", "every"]);
});

test("completion after `x.` offers an entity's fields, a slot's members, a principal's members", (t) => {
  const field = at(inExpense("report.employee)", 0, 7));
  t.deepEqual(labels(completion(field.a, field.pos)), ["employee", "employeeEmail", "total", "category", "receiptUrl", "summary", "decidedBy", "reminders"]);
  const slot = at(inExpense("receipts.CallbackUrl()", 0, 9));
  t.deepEqual(labels(completion(slot.a, slot.pos)), ["done", "count", "CallbackUrl", "TaskUrl"]);
  const principal = at(inExpense("p.hasRole", 0, 2));
  t.deepEqual(labels(completion(principal.a, principal.pos)), ["id", "email", "roles", "hasRole"]);
});

test("completion elsewhere offers keywords, builtins and the names in scope; it keeps working while the text is broken", (t) => {
  const { a, pos } = at(inExpense("    let summary", 0, 4));
  const got = labels(completion(a, pos));
  for (const l of ["let", "send", "if", "after", "every", "webhook", "message", "now", "lower", "contains", "report", "approvers", "dueBy", "count"]) t.true(got.includes(l), l);
  // Broken mid-edit: `-> ` with nothing after it does not parse; the last good analysis supplies the states.
  const good = new Analysis(URI, 1, EXPENSE, null);
  const broken = at(inExpense("-> Escalated", 0, 3).replace("‸Escalated", "‸"), good);
  t.is(broken.a.result.ast, null);
  t.true(labels(completion(broken.a, broken.pos)).includes("Approved"));
});

test("hover shows the declaration: an event's signature, an entity's fields, a slot's settings; and a diagnostic's description", (t) => {
  const ev = at(inExpense("Review(approve, comment) as review", 0, 2));
  const evText = JSON.stringify(hover(ev.a, ev.pos));
  t.regex(evText, /event Review\(approve: bool/);
  const ent = at(inExpense("report: Report", 0, 10));
  t.regex(JSON.stringify(hover(ent.a, ent.pos)), /entity Report \{.*employee: string/);
  const slot = at(inExpense("on review(approve, comment) {", 0, 4));
  t.regex(JSON.stringify(hover(slot.a, slot.pos)), /subscribe Review\(approve, comment\) as review \{.*After: receipts/);
  const builtin = at(inExpense("lower(report.category)", 0, 2));
  t.regex(JSON.stringify(hover(builtin.a, builtin.pos)), /lower\(string\): string/);
  const bad = at("workflow W\ninitial state A {\n  on no‸pe() -> B\n}\nterminal state B\n");
  const h = JSON.stringify(hover(bad.a, bad.pos));
  t.regex(h, /FLOW104/);
  t.regex(h, /UnknownAlias/);
  t.regex(h, /docs\/diagnostics\.md#flow104/);
});

test("definition and references: states, events, entities and fields, aliases, lets, parameters", (t) => {
  const cases: [string, number, number, string][] = [
    ["-> Escalated", 0, 4, "state Escalated"],
    ["subscribe Review", 0, 11, "event Review"],
    ["report: Report", 0, 10, "entity Report"],
    ["report.summary = who", 0, 9, "summary: string?"],
    ["receipts.CallbackUrl", 0, 2, "SubmitReceipts(count) as receipts"],
    ["who + \" filed", 0, 1, "let who"],
    ["count == 0", 0, 1, "on receipts(count)"],
    ["report.employee)", 0, 1, "workflow ExpenseReport(report"],
  ];
  for (const [needle, n, shift, declContext] of cases) {
    const { a, pos } = at(inExpense(needle, n, shift));
    const def = definition(a, pos);
    t.truthy(def, needle);
    const start = a.offset(def!.range.start);
    const line = a.text.slice(a.text.lastIndexOf("\n", start) + 1, a.text.indexOf("\n", start));
    t.true(line.includes(declContext), `${needle}: ${line}`);
    const refs = references(a, pos, true);
    t.true(refs.length >= 2, needle);
    t.deepEqual(refs[0].range, def!.range);
  }
  const { a, pos } = at(inExpense("-> Rejected", 0, 4));
  t.is(references(a, pos, false).length, 3); // default -> Rejected in both states, and the expired arrow
});

test("rename: every occurrence of the symbol, nothing else; refusals for bad names and clashes", (t) => {
  const { a, pos } = at(inExpense("on receipts(count)", 0, 4));
  const target = renameTarget(a, pos);
  if ("refused" in target) return t.fail(target.refused);
  const edit = renameEdits(a, target.symbol, "proofs");
  if ("refused" in edit) return t.fail(edit.refused);
  const edits = edit.changes![URI];
  t.is(edits.length, 7); // as receipts, After: receipts, receipts.CallbackUrl(), on receipts(…), receipts.done in the timer, on receipts.expired, receipts.done
  let out = a.text;
  for (const e of [...edits].sort((x, y) => a.offset(y.range.start) - a.offset(x.range.start))) {
    out = out.slice(0, a.offset(e.range.start)) + e.newText + out.slice(a.offset(e.range.end));
  }
  const after = compile(out);
  t.deepEqual(after.diagnostics.filter((d) => d.severity === "error"), []);
  t.false(/\breceipts\b/.test(out.replace(/\/\/.*$/gm, "").replace(/"[^"]*"/g, "")));
  t.regex(JSON.stringify(renameEdits(a, target.symbol, "review")), /already a slot named 'review'/);
  t.regex(JSON.stringify(renameEdits(a, target.symbol, "state")), /keyword/);
  t.regex(JSON.stringify(renameEdits(a, target.symbol, "9x")), /not a name/);
});

test("document symbols: the outline of the workflow", (t) => {
  const a = new Analysis(URI, 1, EXPENSE, null);
  const outline = documentSymbols(a);
  t.deepEqual(outline.map((s) => s.name), ["ExpenseReport", "Report", "Review", "SubmitReceipts", "report", "approvers", "dueBy", "Submitted", "Escalated", "Approved", "Rejected"]);
  t.deepEqual(outline.find((s) => s.name === "Submitted")!.children!.map((c) => c.name), ["receipts", "review", "ReceiptsIn"]);
  t.is(outline.find((s) => s.name === "Report")!.children!.length, 8);
});

test("formatting gives the formatter's text, nothing for a formatted file, null for one that does not parse", (t) => {
  t.deepEqual(formatting(new Analysis(URI, 1, EXPENSE, null)), []);
  const edits = formatting(new Analysis(URI, 1, "workflow  W\ninitial state A {\nenter {}\n}\nterminal state B", null));
  t.is(edits![0].newText, "workflow W\ninitial state A {\n  enter {}\n}\nterminal state B\n");
  t.is(formatting(new Analysis(URI, 1, "workflow W\ninitial state A {", null)), null);
});

test("formatting and the index are computed once per document version and kept (issue 21 item 2)", (t) => {
  const a = new Analysis(URI, 1, "workflow  W\ninitial state A {\nenter {}\n}\nterminal state B", null);
  const first = formatting(a);
  t.is(first?.length, 1);
  t.is(formatting(a), first);
  t.is(a.index, a.index);
  t.not(new Analysis(URI, 2, a.text, a).index, a.index);
});

test("quick fixes: an unknown state or alias with a near name; the missing parameters of a map event", (t) => {
  const src = "workflow W\nevent Go()\ninitial state Start {\n  subscribe Go() as go\n  on goo() -> Finsh\n}\nterminal state Finish\n";
  const a = new Analysis(URI, 1, src, null);
  const actions = codeActions(a, { start: { line: 4, character: 0 }, end: { line: 4, character: 30 } });
  t.deepEqual(actions.map((x) => x.title), ["Change 'goo' to 'go'", "Change 'Finsh' to 'Finish'"]);
  const fixedAlias = actions[0].edit!.changes![URI][0];
  t.deepEqual(fixedAlias.range, { start: { line: 4, character: 5 }, end: { line: 4, character: 8 } });

  const mapSrc = "workflow W\nevent Approve(ok: bool, note: string, level: int)\nmap event Approve(ok: bool) to Approve(ok: ok)\ninitial state A {\n  subscribe Approve(ok, note, level) as a\n  on a(ok, note, level) -> B\n}\nterminal state B\n";
  const m = new Analysis(URI, 1, mapSrc, null);
  const fixes = codeActions(m, { start: { line: 2, character: 0 }, end: { line: 2, character: 40 } });
  t.is(fixes.length, 1);
  const e = fixes[0].edit!.changes![URI][0];
  const fixed = mapSrc.slice(0, m.offset(e.range.start)) + e.newText + mapSrc.slice(m.offset(e.range.end));
  t.regex(fixed, /to Approve\(ok: ok, note: "", level: 0\)/);
  t.deepEqual(compile(fixed).diagnostics.filter((d) => d.severity === "error"), []);
});

test("an analysis built from the last one after an edit inside a state equals one built from scratch (issue 21 item 2: one declaration re-parsed)", (t) => {
  const before = new Analysis(URI, 1, EXPENSE, null);
  t.truthy(before.result.workflow);
  const at = EXPENSE.indexOf("decidedBy", EXPENSE.indexOf("initial state"));
  t.true(at > 0);
  for (const text of [`${EXPENSE.slice(0, at)}  ${EXPENSE.slice(at)}`, `${EXPENSE.slice(0, at)}x${EXPENSE.slice(at)}`]) {
    const next = new Analysis(URI, 2, text, before);
    const fresh = new Analysis(URI, 2, text, null);
    t.is(next.ast!.entities[0], before.ast!.entities[0]); // re-parsed alone: the declarations before the edit are kept
    // (The kept part of the tree carries the checker's marks from the last version: compared once both are checked.)
    t.deepEqual(next.result, fresh.result);
    t.deepEqual(next.ast, fresh.ast);
    t.deepEqual(next.index?.symbols, fresh.index?.symbols);
    t.deepEqual(next.index?.occurrences, fresh.index?.occurrences);
    t.deepEqual(formatting(next), formatting(fresh));
    t.deepEqual(diagnostics(next), diagnostics(fresh));
  }
});

test("many responders (v0.4): each { } completes as a snippet; hover explains Quorum, each, x.count and x.TaskUrl()", (t) => {
  const src = `workflow W(people: list<string>)
event Sign(ok: bool)
initial state S {
  subscribe Sign(ok) as sigs for each p in people {
    Quorum: 2
    each {
      send email to p { subject: "sign", body: sigs.TaskUrl() }
    }
  }
  on sigs(ok) { when (sigs.count >= 2) -> T }
}
terminal state T
`;
  const cursor = (needle: string, shift: number) => at(src.replace(needle, `${needle.slice(0, shift)}‸${needle.slice(shift)}`));
  const settings = cursor("    Quorum: 2", 4);
  const each = completion(settings.a, settings.pos).find((c) => c.label === "each");
  t.is(each?.insertText, "each {\n\t$0\n}");
  const hoverOf = (needle: string, shift: number) => {
    const c = cursor(needle, shift);
    return JSON.stringify(hover(c.a, c.pos));
  };
  t.regex(hoverOf("Quorum: 2", 2), /Quorum: int.*done once this many elements are completed/);
  t.regex(hoverOf("each {", 1), /each \{ … \}.*once per element/);
  t.regex(hoverOf("sigs.TaskUrl()", 7), /x\.TaskUrl\(\): string.*Not a credential/);
  t.regex(hoverOf("sigs.count", 6), /x\.count: int/);
  // inside each, the slot's members complete as anywhere else
  const member = cursor("sigs.TaskUrl()", 5);
  t.deepEqual(labels(completion(member.a, member.pos)), ["done", "count", "CallbackUrl", "TaskUrl"]);
});

test("timers on a slot (issue 43 item 3): hover explains after and every inside a subscribe or call block, the delay of every P after D, and a state's timer apart", (t) => {
  const src = `workflow W(people: list<string>)
entity V { n: int? }
event Sign(ok: bool)
initial state S {
  subscribe Sign(ok) as sigs for each p in people {
    After: first
    every 2d after 1d { send email to p { subject: "sign", body: sigs.CallbackUrl() } }
    after 10d -> T
  }
  subscribe Sign(ok) as first
  call http "crm" as c { every 1h { send email to "ops@example.test" { subject: "crm", body: "late" } } }
  after 30d -> T
  on sigs(ok) -> T
  on first(ok) -> T
  on c() -> T
}
terminal state T
`;
  const hoverOf = (needle: string, shift: number) => {
    const i = src.indexOf(needle);
    if (i < 0) throw new Error(`no ${needle}`);
    const c = at(`${src.slice(0, i + shift)}‸${src.slice(i + shift)}`);
    return JSON.stringify(hover(c.a, c.pos));
  };
  t.regex(hoverOf("every 2d after 1d", 2), /\(slot timer\) `every P \[after D\] \{ … \}`.*every P while the slot \(each element, when fanned out\) is open/);
  t.regex(hoverOf("after 1d {", 2), /\(slot timer\).*first run's delay of this `every` timer/);
  t.regex(hoverOf("after 10d -> T", 1), /\(slot timer\) `after D \{ … \}`.*runs once, D after the slot opens/);
  t.regex(hoverOf("every 1h", 3), /\(slot timer\) `every P \[after D\] \{ … \}`/, "on a call too");
  t.regex(hoverOf("after 30d", 1), /\(timer\) `after D \{ … \}`.*A timer of the state/);
  t.notRegex(hoverOf("After: first", 1), /timer/, "the After setting is not a timer");
});

test("completion in send message { } offers its fields; after answer: the slot aliases of the state (v0.4)", (t) => {
  const src = (cursorLine: string) =>
    `workflow W\nevent E(ok: bool)\ninitial state A {\n  subscribe E(ok) as decision\n  subscribe E(ok) as other\n  enter {\n${cursorLine}\n  }\n  on decision(ok) -> B\n  on other(ok) -> B\n}\nstate B {\n  subscribe E(ok) as later\n  on later(ok) -> C\n}\nterminal state C\n`;
  const fields = at(src('    send message to "finance-slack" { text: "Approve?", ‸ }'));
  t.deepEqual(labels(completion(fields.a, fields.pos)), ["text", "link", "label", "answer"]);
  // the names come from the last analysis that parsed (the line is broken while typing)
  const parsed = new Analysis(URI, 1, src('    send message to "finance-slack" { text: "Approve?", answer: decision }'), null);
  const answer = at(src('    send message to "finance-slack" { text: "Approve?", answer: ‸ }'), parsed);
  t.deepEqual(labels(completion(answer.a, answer.pos)).sort(), ["decision", "other"]);
});

test("completion after @ offers the annotations and the constraints (v0.5); hover of a constraint says what it checks", (t) => {
  const src = "workflow W\nevent E(revenue: decimal @‸)\ninitial state S\nterminal state T\n";
  const items = completion(at(src).a, at(src).pos);
  t.deepEqual(labels(items).sort(), ["email", "help", "label", "max", "maxLength", "min", "minLength", "multiline", "oneOf", "pattern"]);
  t.is(items.find((i) => i.label === "min")?.insertText, "min($1)");
  const hovered = at("workflow W\nevent E(revenue: decimal @m‸in(0))\ninitial state S {\n  subscribe E(revenue) as e\n  on e(revenue) -> T\n}\nterminal state T\n");
  const text = JSON.stringify(hover(hovered.a, hovered.pos));
  t.regex(text, /\(annotation\) `@min\(n\)`/);
  t.regex(text, /every door/);
});
