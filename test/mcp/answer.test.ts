/**
 * get_answer (and request_approval / ask_human) say who answered (issue 38 M2): `answeredBy` is
 * the completed slot's answeredBy — `{via: "link"}` for the link's holder — read from the run view.
 */
import test from "ava";
import { answerOf } from "../../src/mcp/tools.js";
import { ASK_HUMAN, REQUEST_APPROVAL } from "../../src/mcp/builtins.js";
import type { RunView } from "../../src/engine/views/views.js";

const view = (workflow: string, alias: string, answeredBy: unknown, entities: Record<string, unknown>) =>
  ({
    id: "5f0c1d2e-0000-4000-8000-000000000001",
    workflow,
    status: "finished",
    state: "Answered",
    entities: { ask: entities },
    slots: [{ alias, status: "completed", closedAt: new Date("2026-11-28T06:00:00Z"), answeredBy }],
  }) as unknown as RunView;

test("request_approval's answer names who answered: the link", (t) => {
  const a = answerOf(view(REQUEST_APPROVAL, "answer", { via: "link" }, { approved: true, comment: "ok" }));
  t.like(a, { status: "answered", approved: true, comment: "ok", answeredAt: "2026-11-28T06:00:00.000Z", answeredBy: { via: "link" } });
});

test("ask_human's answer names who answered; a principal is named by id and email", (t) => {
  const by = { via: "principal", id: "ann", email: "ann@example.test" };
  t.like(answerOf(view(ASK_HUMAN, "reply", by, { answer: "blue", comment: null })), { status: "answered", answer: "blue", answeredBy: by });
});
