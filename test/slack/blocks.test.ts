/**
 * Block Kit for answers inside Slack (v0.4; src/channels/slack/blocks.ts, src/engine/values/answer-controls.ts): the
 * controls decided from the event's signature, Slack's limits on every payload (≤ 50 blocks in a
 * message, ≤ 100 in a modal, text lengths, unique action_id / block_id), mrkdwn escaping of run
 * data, and the reading of a modal's submission (checked like the responder page).
 */
import test from "ava";
import type { CompiledParam, TypeSpec } from "../../src/lang/compiled.js";
import { ACTION, LIMITS, answerModal, closedMessage, outcomeLine, questionMessage, readSubmission } from "../../src/channels/slack/blocks.js";
import { controlsFor, type AnswerControls } from "../../src/engine/values/answer-controls.js";

const ty = (kind: TypeSpec["kind"], optional = false) => ({ kind, optional }) as TypeSpec;
const p = (name: string, type: TypeSpec, page?: CompiledParam["page"]): CompiledParam => ({ name, type, ...(page ? { page } : {}) });
const ref = "AbCdEfGhIjKlMnOpQrStUv";

test("controls: one bool and otherwise nullable parameters → two buttons (labels from @label, else Approve / Reject); anything else → a modal", (t) => {
  t.deepEqual(controlsFor("Decide", [p("ok", ty("bool")), p("note", ty("string", true))]), { kind: "buttons", param: "ok", nulls: ["note"], yes: "Approve", no: "Reject" });
  t.like(controlsFor("Decide", [p("ok", ty("bool"), { label: "Pay / Hold" })]), { kind: "buttons", yes: "Pay", no: "Hold" });
  t.like(controlsFor("Decide", [p("ok", ty("bool"), { label: "Pay now" })]), { kind: "buttons", yes: "Pay now", no: "Reject" });
  t.is(controlsFor("E", [p("ok", ty("bool")), p("note", ty("string"))]).kind, "modal");
  t.is(controlsFor("E", [p("a", ty("bool")), p("b", ty("bool"))]).kind, "modal");
  t.is(controlsFor("E", [p("ok", ty("bool", true))]).kind, "modal");
  t.is(controlsFor("E", []).kind, "modal");
  const modal = controlsFor("E", [p("s", ty("string"), { multiline: true }), p("n", ty("int")), p("d", ty("decimal")), p("at", ty("datetime")), p("b", ty("bool")), p("dur", ty("duration")), p("l", { kind: "list", element: ty("string"), optional: false })]);
  if (modal.kind !== "modal") return t.fail();
  t.deepEqual(modal.params.map((x) => [x.name, x.input, x.multiline]), [["s", "text", true], ["n", "number", false], ["d", "number", false], ["at", "date", false], ["b", "checkbox", false], ["dur", "text", false], ["l", "json", false]]);
});

/** Every block_id and action_id of `blocks` (recursively), for the uniqueness checks. */
function ids(blocks: unknown[]): { blockIds: string[]; actionIds: string[] } {
  const blockIds: string[] = [];
  const actionIds: string[] = [];
  for (const b of blocks as any[]) {
    if (b.block_id) blockIds.push(b.block_id);
    if (b.type === "actions") for (const e of b.elements) actionIds.push(e.action_id);
  }
  return { blockIds, actionIds };
}

test("a message within Slack's limits whatever the run's data: ≤ 50 blocks, section ≤ 3000, button ≤ 75, value ≤ 2000, unique ids", (t) => {
  const huge = "x".repeat(10_000);
  for (const controls of [
    controlsFor("Decide", [p("ok", ty("bool"), { label: `${"L".repeat(200)} / ${"M".repeat(200)}` })]),
    controlsFor("E", [p("s", ty("string"))]),
  ] as AnswerControls[]) {
    const m = questionMessage(huge, ref, controls);
    t.true(m.blocks.length <= LIMITS.messageBlocks);
    t.true(m.text.length <= LIMITS.sectionText);
    for (const b of m.blocks as any[]) {
      if (b.type === "section") t.true(b.text.text.length <= LIMITS.sectionText);
      if (b.type === "actions") {
        for (const e of b.elements) {
          t.true(e.text.text.length <= LIMITS.buttonText && e.text.text.length > 0);
          t.true(e.value.length <= LIMITS.buttonValue);
          t.is(e.value, ref);
          t.true(e.action_id.length <= LIMITS.id);
        }
      }
    }
    const { blockIds, actionIds } = ids(m.blocks);
    t.is(new Set(blockIds).size, blockIds.length);
    t.is(new Set(actionIds).size, actionIds.length);
  }
  const buttons = questionMessage("Approve?", ref, controlsFor("Decide", [p("ok", ty("bool"))]));
  t.deepEqual(ids(buttons.blocks).actionIds, [ACTION.yes, ACTION.no]);
  const closed = closedMessage(huge, "Approved by <@U1> at …");
  t.true(closed.blocks.length <= LIMITS.messageBlocks && closed.text.length <= LIMITS.sectionText);
  t.false((closed.blocks as any[]).some((b) => b.type === "actions"));
});

test("run data cannot form a mention or a link: & < > escaped in the section and the notification text", (t) => {
  const m = questionMessage("Pay <!channel> & <https://evil.example|here>?", ref, controlsFor("Decide", [p("ok", ty("bool"))]));
  t.is(m.text, "Pay &lt;!channel&gt; &amp; &lt;https://evil.example|here&gt;?");
  t.is((m.blocks[0] as any).text.text, m.text);
});

test("a modal within Slack's limits: ≤ 100 blocks, title/submit/close ≤ 24, labels and hints ≤ 2000, unique block ids, metadata ≤ 3000", (t) => {
  const params = Array.from({ length: 150 }, (_, i) => p(`p${i}`, ty(i % 2 ? "int" : "string"), { label: "L".repeat(3000), help: "H".repeat(3000) }));
  const controls = controlsFor("Big", params);
  if (controls.kind !== "modal") return t.fail();
  const view = answerModal("Q".repeat(5000), ref, controls);
  t.true(view.blocks.length <= LIMITS.modalBlocks);
  for (const x of [view.title, view.submit!, view.close!]) t.true(x.text.length <= LIMITS.modalTitle);
  t.true(view.private_metadata!.length <= LIMITS.metadata);
  const blockIds = (view.blocks as any[]).map((b) => b.block_id).filter(Boolean);
  t.is(new Set(blockIds).size, blockIds.length);
  for (const b of view.blocks as any[]) {
    if (b.type === "input") {
      t.true(b.label.text.length <= LIMITS.inputLabel);
      t.true(b.hint.text.length <= LIMITS.hint);
      t.is(b.element.action_id, "v");
    }
    if (b.type === "section") t.true(b.text.text.length <= LIMITS.sectionText);
  }
});

test("a modal's submission is read into the event's arguments and checked like the responder page; errors name the block", (t) => {
  const params = [p("amount", ty("int"), { label: "Amount" }), p("due", ty("datetime")), p("note", ty("string", true)), p("urgent", ty("bool")), p("tags", { kind: "list", element: ty("string"), optional: false })];
  const controls = controlsFor("Details", params);
  if (controls.kind !== "modal") return t.fail();
  const values = (amount: string, tags: string) => ({
    p0: { v: { value: amount } },
    p1: { v: { selected_date: "2026-12-01" } },
    p2: { v: { value: null } },
    p3: { v: { selected_options: [] } },
    p4: { v: { value: tags } },
  });
  t.deepEqual(readSubmission(controls, values("1200", '["a","b"]'), params), { ok: true, args: { amount: 1200, due: "2026-12-01T00:00:00Z", note: null, urgent: false, tags: ["a", "b"] } });
  const notInt = readSubmission(controls, values("12.5", "[]"), params);
  t.false(notInt.ok);
  if (!notInt.ok) t.deepEqual(Object.keys(notInt.errors), ["p0"]);
  const notJson = readSubmission(controls, values("1", "[a"), params);
  if (notJson.ok) return t.fail();
  t.deepEqual(Object.keys(notJson.errors), ["p4"]);
  const wrongList = readSubmission(controls, values("1", "[1]"), params);
  if (wrongList.ok) return t.fail();
  t.deepEqual(Object.keys(wrongList.errors), ["p4"]);
});

test("the line that replaces the controls says how the slot closed", (t) => {
  const buttons = controlsFor("Decide", [p("ok", ty("bool"))]);
  const at = new Date("2026-11-26T17:00:00Z");
  const slack = { via: "slack", id: "slack:T1:U0ALICE", email: "a@x" };
  t.regex(outcomeLine(buttons, { status: "completed", closedAt: at, args: { ok: true }, answeredBy: slack }), /^Approved by <@U0ALICE> at <!date\^1795712400\^\{date_short_pretty\} at \{time\}\|2026-11-26 17:00 UTC>$/);
  t.regex(outcomeLine(buttons, { status: "completed", closedAt: at, args: { ok: false }, answeredBy: { via: "link" } }), /^Rejected by the holder of its link at /);
  t.regex(outcomeLine(buttons, { status: "completed", closedAt: at, args: { ok: true }, answeredBy: { via: "principal", id: "u1", email: "<b>@x" } }), /^Approved by &lt;b&gt;@x at /);
  t.regex(outcomeLine(buttons, { status: "expired", closedAt: at, args: null, answeredBy: null }), /^Expired at .*, unanswered\.$/);
  t.regex(outcomeLine(buttons, { status: "cancelled", closedAt: at, args: null, answeredBy: null }), /^No longer asked/);
  const pay = controlsFor("Decide", [p("ok", ty("bool"), { label: "Pay / Hold" })]);
  t.regex(outcomeLine(pay, { status: "completed", closedAt: at, args: { ok: false }, answeredBy: slack }), /^“Hold” by <@U0ALICE>/);
});
