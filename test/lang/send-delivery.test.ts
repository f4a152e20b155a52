/**
 * `send webhook` / `send message` (issue 18 item 2; language.md §10): syntax and type rules, with
 * diagnostics asserted by code and range (never by message).
 */
import test from "ava";
import { Codes } from "../../src/lang/codes.js";
import { endpointRefs } from "../../src/lang/send-delivery.js";
import { expectClean, expectDiagnostics, inEnter } from "./helpers.js";

const SLOT = "  subscribe E(a, b) as e";

test("send webhook: type plus any data fields of a JSON form (scalars, lists, entities, links); endpoint named by a string literal", (t) => {
  const r = expectClean(
    t,
    inEnter(
      '    send webhook to "vendor-portal" {\n      type: "vendor.approval.requested"\n      vendor: v\n      amount: r, count: n\n      names: names\n      due: at\n      url: e.CallbackUrl()\n    }',
      SLOT,
    ),
  );
  const enter = r.ast!.states[0].members.find((m) => m.kind === "enter");
  if (enter?.kind !== "enter") return t.fail();
  const st = enter.body[0];
  t.is(st.kind, "sendWebhook");
  if (st.kind !== "sendWebhook") return;
  t.is(st.endpoint.name, "vendor-portal");
  t.deepEqual(st.data.map((f) => f.name.name), ["vendor", "amount", "count", "names", "due", "url"]);
  t.deepEqual(endpointRefs(r.workflow).map((e) => e.name), ["vendor-portal"]);
});

test("send message: text, optional link and label", (t) => {
  expectClean(t, inEnter('    send message to "finance-chat" { text: "Approve " + v.s + "?", link: e.CallbackUrl(), label: "Open to answer" }', SLOT));
  expectClean(t, inEnter('    send message to "finance-chat" { text: "FYI" }'));
  expectClean(t, inEnter('    send message to "chat" {\n      text: v.o ?? "none"\n      link: v.o\n    }'));
});

test("the endpoint must be a string literal (FLOW031)", (t) => {
  expectDiagnostics(t, inEnter("    send message to ⟦v.s⟧ { text: \"x\" }"), [Codes.EndpointNotLiteral]);
  expectDiagnostics(t, inEnter('    send webhook to ⟦"a" + "b"⟧ { type: "t" }'), [Codes.EndpointNotLiteral]);
});

test("a webhook needs type; a message needs text and has only text, link, label; each once (FLOW030)", (t) => {
  expectDiagnostics(t, inEnter('    send webhook to "p" ⟦{ amount: n }⟧'), [Codes.DeliveryFields]);
  expectDiagnostics(t, inEnter('    send message to "c" ⟦{ link: "x" }⟧'), [Codes.DeliveryFields]);
  expectDiagnostics(t, inEnter('    send message to "c" { text: "x", ⟦url⟧: "y" }'), [Codes.DeliveryFields]);
  expectDiagnostics(t, inEnter('    send webhook to "p" { type: "t", a: 1, ⟦a⟧: 2 }'), [Codes.DeliveryFields]);
});

test("type, text, link and label are strings; data fields have a JSON form (FLOW200)", (t) => {
  expectDiagnostics(t, inEnter('    send webhook to "p" { type: ⟦n⟧ }'), [Codes.TypeMismatch]);
  expectDiagnostics(t, inEnter('    send message to "c" { text: ⟦true⟧, link: ⟦n⟧, label: ⟦at⟧ }'), [Codes.TypeMismatch, Codes.TypeMismatch, Codes.TypeMismatch]);
  expectDiagnostics(t, inEnter('    send webhook to "p" { type: "t", slot: ⟦e⟧ }', SLOT), [Codes.SlotNotAValue]);
});

test("a wrong word after send still says so (send email is unchanged)", (t) => {
  expectDiagnostics(t, inEnter('    send ⟦sms⟧ to "x" { subject: "a", body: "b" }'), [Codes.ExpectedContextualWord]);
  expectClean(t, inEnter('    send email to "a@example.com" { subject: "a", body: "b" }'));
});

test("FLOW330 (an endpoint no operator has set) is a deploy's warning, never the compiler's: check knows no endpoints", (t) => {
  const r = expectClean(t, inEnter('    send message to "no-such-endpoint" { text: "x" }'));
  t.false(r.diagnostics.some((d) => d.code === Codes.UnknownEndpoint));
  t.deepEqual(endpointRefs(r.workflow).map((e) => e.name), ["no-such-endpoint"]);
});

test("send message: answer names a slot of this state (v0.4 Answers inside Slack)", (t) => {
  const r = expectClean(t, inEnter('    send message to "finance-slack" { text: "Approve?", answer: e }', SLOT));
  const enter = r.ast!.states[0].members.find((m) => m.kind === "enter");
  if (enter?.kind !== "enter") return t.fail();
  const st = enter.body[0];
  if (st.kind !== "sendMessage") return t.fail();
  t.is(st.answer?.name, "e");
  // a message without answer has none
  const plain = expectClean(t, inEnter('    send message to "c" { text: "x" }'));
  const e2 = plain.ast!.states[0].members.find((m) => m.kind === "enter");
  if (e2?.kind !== "enter" || e2.body[0].kind !== "sendMessage") return t.fail();
  t.is(e2.body[0].answer, null);
});

test("answer: no such slot, not an alias, a fanned-out slot, a slot of another state (FLOW318); twice (FLOW030)", (t) => {
  expectDiagnostics(t, inEnter('    send message to "c" { text: "x", answer: ⟦nope⟧ }', SLOT), [Codes.AnswerNotASlot]);
  expectDiagnostics(t, inEnter('    send message to "c" { text: "x", answer: ⟦"e"⟧ }', SLOT), [Codes.AnswerNotASlot]);
  expectDiagnostics(t, inEnter('    send message to "c" { text: "x", answer: e, ⟦answer⟧: e }', SLOT), [Codes.DeliveryFields]);
  expectDiagnostics(t, inEnter('    send message to "c" { text: "x", answer: ⟦f⟧ }', "  subscribe G() as f for each x in names"), [Codes.AnswerNotASlot]);
  expectDiagnostics(
    t,
    `workflow W(v: V)
entity V { s: string }
event G()
initial state S {
  subscribe G() as a
  on a() -> U
}
state U {
  subscribe G() as b
  enter {
    send message to "c" { text: "x", answer: ⟦a⟧ }
  }
  on b() -> T
}
terminal state T
`,
    [Codes.AnswerNotASlot],
  );
});
