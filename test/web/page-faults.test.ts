/**
 * Small page faults a new user found (issue 38 defect 4), as HTML assertions on the documents the
 * web process serves (src/web/page/document.ts; the browser suites drive the same pages):
 * - "Please check the fields marked below." has its place above the fields, not under the button;
 * - the forward form's email field is styled like the other fields;
 * - a parameter whose `@help` already says "Optional:" (the agents' built-ins) does not say it twice;
 * - expired, replaced, passed-on and unknown links answered nothing: no "Answered through a
 *   single-use link…" footer; a used link and a live one not yet open keep it;
 * - a datetime's offset selector starts on UTC unless the page (the task page) gives an offset.
 */
import test from "ava";
import { plainReader } from "../../src/web/page/reader.js";
import { compile } from "../../src/lang/compile.js";
import { REQUEST_APPROVAL_SOURCE } from "../../src/mcp/builtins.js";
import { refuse, RefusalCode, type Refusal } from "../../src/engine/refusals.js";
import { endedDocument, formDocument, PAGE_STYLE } from "../../src/web/page/document.js";
import { field } from "../../src/web/page/form.js";
import { PAGE_SCRIPT } from "../../src/web/page/script.js";

const FLOW = `workflow W(a: A)
entity A { n: int }
event Answer(ok: bool, note: string? @help("Optional: a note for the requester."), qty: int @label("Quantity"), other: string?)
initial state S {
  subscribe Answer(ok, note, qty, other) as answer
  on answer(ok, note, qty, other) -> Done
}
terminal state Done
`;

function answerEvent() {
  const r = compile(FLOW, "w.flow");
  if (!r.workflow) throw new Error(JSON.stringify(r.diagnostics));
  return r.workflow.events.Answer;
}

const page = () => formDocument("n0nce", { workflow: "W", event: "Answer", params: answerEvent().params, title: "Answer?", intro: null }, { token: "tok", csrf: "c" }, plainReader());

test("the field check message has its place at the top of the form, above every field; the outcome stays under the button", (t) => {
  const html = page();
  const form = html.slice(html.indexOf('<form id="answer"'), html.indexOf("</form>") + 7);
  const summary = form.indexOf('<p id="check-fields" class="error" role="alert" hidden></p>');
  t.true(summary > 0, form);
  t.true(summary < form.indexOf("data-param"), "above the first field");
  t.true(html.indexOf('id="outcome"') > html.indexOf("Send answer"), "the outcome (done, refusals) stays under the button");
  // the script writes the words there, not into the outcome
  t.regex(PAGE_SCRIPT, /getElementById\("check-fields"\)[\s\S]*?textContent = WORDS\.checkFields/);
});

test("the forward form's email field is styled like the other fields", (t) => {
  const html = page();
  t.regex(html, /<input id="forward-email" name="email" type="email"/);
  const rule = /([^{}]*)\{[^}]*border: 1px solid var\(--line\)[^}]*\}/.exec(PAGE_STYLE.replace(/\n/g, " "))!;
  t.truthy(rule);
  t.true(rule[1].split(",").map((s) => s.trim()).includes("input[type=email]"), rule[1]);
  t.true(rule[1].split(",").map((s) => s.trim()).includes("input[type=text]"));
});

test("a help that already says Optional: is not followed by a second Optional:; other optional fields keep the hint", (t) => {
  const [, note, , other] = answerEvent().params;
  const noteHtml = field(note).text;
  t.regex(noteHtml, /<p class="help" id="help-note">Optional: a note for the requester\. Leave it empty for none\.<\/p>/);
  t.is(noteHtml.match(/Optional/g)?.length, 1);
  t.regex(field(other).text, /<p class="help" id="help-other">Optional: leave it empty for none\.<\/p>/);
  // the agents' built-in asks exactly that way (docs/agents.md)
  const builtin = compile(REQUEST_APPROVAL_SOURCE, "builtin.flow").workflow!;
  const comment = Object.values(builtin.events).flatMap((e) => e.params).find((p) => p.name === "comment")!;
  t.is(field(comment).text.match(/Optional/g)?.length, 1, field(comment).text);
});

test("expired, replaced, passed-on, dead and unknown links answered nothing: no single-use footer; a used link and one not open yet keep it", (t) => {
  const ended = (r: Refusal, expiredAt: Date | null = null) => endedDocument("n0nce", r, expiredAt, plainReader());
  const withReason = (code: RefusalCode, reason: string) => ({ ...refuse(code, "x"), extra: { reason } });
  const none: [string, string][] = [
    ["expired", ended(withReason(RefusalCode.LinkDead, "expired"), new Date("2026-11-20T10:00:00Z"))],
    ["passed on", ended(withReason(RefusalCode.LinkRetired, "forwarded"))],
    ["replaced", ended(withReason(RefusalCode.LinkRetired, "replaced"))],
    ["cancelled", ended(withReason(RefusalCode.LinkDead, "cancelled"))],
    ["unknown", ended(refuse(RefusalCode.LinkNotFound, "x"))],
  ];
  for (const [what, html] of none) {
    t.notRegex(html, /<footer>/, what);
    t.notRegex(html, /single-use link/, what);
  }
  t.regex(ended(refuse(RefusalCode.LinkBurned, "x")), /<footer>Answered through a single-use link/);
  t.regex(ended(refuse(RefusalCode.SlotNotOpen, "x")), /<footer>Answered through a single-use link/);
});

test("a datetime's offset selector starts on UTC unless the page gives an offset (the task page: the person's zone's); a posted offset wins", (t) => {
  const r = compile(`workflow W(a: A)
entity A { n: int }
event Due(at: datetime, later: list<datetime>)
initial state S {
  subscribe Due(at, later) as due
  on due(at, later) -> Done
}
terminal state Done
`, "w.flow");
  if (!r.workflow) throw new Error(JSON.stringify(r.diagnostics));
  const [at, later] = r.workflow.events.Due.params;
  const selected = (h: string) => [...h.matchAll(/<option value="([^"]+)" selected>/g)].map((m) => m[1]);
  const fresh = { values: new URLSearchParams(), errors: {}, rows: { later: ["r1"] } };
  // the responder page (script mode) and a post-mode form without an offset: UTC, as before
  t.deepEqual(selected(field(at!, undefined, "en").text), ["Z"]);
  t.deepEqual(selected(field(at!, fresh, "en").text), ["Z"]);
  // the task page passes the person's offset: the field and each list row start on it
  t.deepEqual(selected(field(at!, fresh, "en", "+02:00").text), ["+02:00"]);
  t.deepEqual(selected(field(later!, fresh, "en", "+05:45").text), ["+05:45"]);
  // a form shown again keeps what was sent; an offset that is no entry starts on UTC
  t.deepEqual(selected(field(at!, { ...fresh, values: new URLSearchParams({ "at.offset": "-03:30" }) }, "en", "+02:00").text), ["-03:30"]);
  t.deepEqual(selected(field(at!, fresh, "en", "+02:07").text), ["Z"]);
});
