/**
 * The language server on calls and results (v0.5; docs/language.md section 16): completion of
 * the callee words after `call`, the events after `returns`, the call settings in a `call … { }`
 * block, the HTTP methods after `Method:`, `failed` after `on x.` of a call (only `expired` for a
 * subscribe), a call's members after `x.`; hover of `call`, `returns`, `result`, the call settings
 * and `x.error`; the new diagnostics with their descriptions.
 */
import { readFileSync } from "node:fs";
import test from "ava";
import { Analysis } from "../../src/authoring/lsp/analysis.js";
import { completion } from "../../src/authoring/lsp/completion.js";
import { diagnostics, hover } from "../../src/authoring/lsp/features.js";
import { ROOT } from "../helpers/root.js";

const URI = "file:///w/calls.flow";
const CALLS = readFileSync(`${ROOT}test/fixtures/calls.flow`, "utf8");

/** The analysis of `text` with the cursor where `‸` is (after one of CALLS, which parses). */
function at(marked: string): { a: Analysis; pos: { line: number; character: number } } {
  const offset = marked.indexOf("‸");
  if (offset < 0) throw new Error("no cursor");
  const text = marked.replace("‸", "");
  const before = text.slice(0, offset).split("\n");
  const good = new Analysis(URI, 1, CALLS, null);
  const a = new Analysis(URI, 2, text, good);
  return { a, pos: { line: before.length - 1, character: before.at(-1)!.length } };
}

/** CALLS with `insert` put on a new line after the line holding `needle`, the cursor at its end. */
function after(needle: string, insert: string): string {
  const i = CALLS.indexOf("\n", CALLS.indexOf(needle));
  return `${CALLS.slice(0, i)}\n${insert}‸${CALLS.slice(i)}`;
}

const labels = (items: { label: string }[]) => items.map((c) => c.label);

test("completion: callee words after call, events after returns", (t) => {
  const call = at(after("on credit.expired -> Manual", "  call "));
  t.deepEqual(labels(completion(call.a, call.pos)), ["http", "task", "workflow"]);
  const ret = at(after("on credit.expired -> Manual", '  call http "x" as y returns '));
  t.deepEqual(labels(completion(ret.a, ret.pos)).sort(), ["Checked", "Done", "Ok", "Scored"]);
});

test("completion: the call settings in a call block, the methods after Method:", (t) => {
  const settings = at(after("    Attempts: 5", "    "));
  const got = labels(completion(settings.a, settings.pos));
  for (const s of ["Method", "Path", "Input", "Timeout", "Attempts", "After", "Deadline", "Quorum", "each"]) t.true(got.includes(s), s);
  t.false(got.includes("Candidates"), "a person's setting is not offered on a call");
  const method = at(after("    Attempts: 5", "    Method: "));
  t.deepEqual(labels(completion(method.a, method.pos)), ["GET", "POST", "PUT", "PATCH", "DELETE"]);
});

test("completion: on x. offers failed for a call, only expired otherwise; x. offers a call's members", (t) => {
  const onCall = at(after("on credit.expired -> Manual", "  on credit."));
  t.deepEqual(labels(completion(onCall.a, onCall.pos)), ["expired", "failed"]);
  const members = at(after("on credit.expired -> Manual", "  enter { supplier.note = credit."));
  t.deepEqual(labels(completion(members.a, members.pos)), ["done", "count", "error", "status", "attempts"]);
});

test("hover: call, returns, result, a call setting and x.error explain themselves", (t) => {
  const a = new Analysis(URI, 1, CALLS, null);
  const hoverAt = (needle: string, shift = 0) => {
    const offset = CALLS.indexOf(needle) + shift;
    const lines = CALLS.slice(0, offset).split("\n");
    const h = hover(a, { line: lines.length - 1, character: lines.at(-1)!.length });
    return h && typeof h.contents === "object" && "value" in h.contents ? h.contents.value : "";
  };
  t.regex(hoverAt('call http "credit-bureau"', 1), /slot that a machine answers/);
  t.regex(hoverAt("returns Scored", 1), /answer carries/);
  t.regex(hoverAt("result { score: score", 1), /run's result/);
  t.regex(hoverAt("Timeout: 10s", 1), /Per attempt/);
  t.regex(hoverAt("credit.error", 8), /why it failed/);
});

test("the new diagnostics reach the editor with their description", (t) => {
  const text = CALLS.replace("Attempts: 5", "Attempts: 0");
  const a = new Analysis(URI, 1, text, null);
  const d = diagnostics(a).find((x) => x.code === "FLOW374");
  t.truthy(d);
  const lines = text.slice(0, text.indexOf("Attempts: 0") + 11).split("\n");
  const h = hover(a, { line: lines.length - 1, character: lines.at(-1)!.length - 1 });
  t.regex(h && typeof h.contents === "object" && "value" in h.contents ? h.contents.value : "", /FLOW374[\s\S]*attempts in all/);
});

test("quick fixes: Method in capitals, the nearest event after returns, the nearest parameter in result", async (t) => {
  const { codeActions } = await import("../../src/authoring/lsp/features.js");
  const fixes = (text: string, needle: string) => {
    const a = new Analysis(URI, 1, text, null);
    const lines = text.slice(0, text.indexOf(needle) + 1).split("\n");
    const pos = { line: lines.length - 1, character: lines.at(-1)!.length };
    return codeActions(a, { start: pos, end: pos }).map((c) => c.title);
  };
  t.deepEqual(fixes(CALLS.replace("Method: POST", "Method: post"), "post"), ["Change 'post' to 'POST'"]);
  t.deepEqual(fixes(CALLS.replace("returns Scored {", "returns Scord {"), "Scord"), ["Change 'Scord' to 'Scored'"]);
  t.deepEqual(fixes(CALLS.replace("result { score: score,", "result { scor: score,"), "scor:"), ["Change 'scor' to 'score'"]);
});
