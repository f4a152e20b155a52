/**
 * Issue 19 item 1 (language reference §10 "Timers") and item 2 (routing on entry), through the
 * engine on real PostgreSQL (testing kit): timers start with the state, fire through the deadline
 * machinery, `every` repeats, leaving the state cancels them, the run view shows them, their arms
 * move the run; `enter` arms route at once, with the loop bound.
 */
import test from "ava";
import { Workflow } from "../../src/testing/index.js";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "timers");

const REVIEW = `workflow Review(doc: Doc, amount: int)
entity Doc { reminders: int; escalated: bool; note: string? }
event Approve(ok: bool)
initial state Triage {
  enter {
    doc.reminders = 0
    when (amount <= 100) -> Approved
    default -> Waiting
  }
}
state Waiting {
  subscribe Approve(ok) as decision { Candidates: anyone() }
  every 1d after 12h {
    doc.reminders = doc.reminders + 1
    send email to "boss@example.com" { subject: "Reminder " + doc.reminders, body: decision.CallbackUrl() }
  }
  after 3d {
    doc.escalated = true
    when (doc.reminders >= 3) -> TimedOut
  }
  on decision(ok) -> Approved
}
terminal state Approved
terminal state TimedOut
`;

const DAY = 86_400_000;

test.serial("routing on entry: a small amount is approved in the start step; a large one waits", async (t) => {
  const wf = await Workflow.deploy(REVIEW);
  const small = await wf.start({ doc: { reminders: 0, escalated: false, note: null }, amount: 50 });
  t.is(small.state, "Approved");
  t.is(small.status, "finished");
  t.deepEqual(small.timers, []);
  const big = await wf.start({ doc: { reminders: 0, escalated: false, note: null }, amount: 500 });
  t.is(big.state, "Waiting");
  t.deepEqual(big.slots.map((s) => [s.alias, s.status]), [["decision", "open"]]);
});

test.serial("timers are in the run view with their next firing; every repeats; after fires once and its arm moves the run", async (t) => {
  const wf = await Workflow.deploy(REVIEW);
  const before = Date.now();
  const run = await wf.start({ doc: { reminders: 0, escalated: false, note: null }, amount: 500 });
  t.deepEqual(run.timers.map((x) => [x.index, x.schedule]), [[0, "every 1d after 12h"], [1, "after 3d"]]);
  const next = run.timers.map((x) => new Date(x.next!).getTime() - before);
  t.true(Math.abs(next[0] - DAY / 2) < 60_000, `first reminder in 12h, was ${next[0]} ms`);
  t.true(Math.abs(next[1] - 3 * DAY) < 60_000, `escalation in 3d, was ${next[1]} ms`);

  await run.advanceTime("13h");
  t.is(run.entities.doc.reminders, 1);
  t.is(run.state, "Waiting");
  const mails = await run.outbox();
  t.deepEqual(mails.map((m) => m.subject), ["Reminder 1"]);
  // The next reminder is one period after the first, not after the advance.
  t.true(Math.abs(new Date(run.timers[0].next!).getTime() - before - 1.5 * DAY + 13 * 3_600_000) < 60_000);

  await run.advanceTime("2d"); // 12h+1d and 12h+2d fall due: two more reminders
  t.is(run.entities.doc.reminders, 3);
  t.is(run.state, "Waiting");
  await run.advanceTime("12h"); // 3d: the escalation fires; 3 reminders so far → TimedOut
  t.is(run.entities.doc.escalated, true);
  t.is(run.state, "TimedOut");
  t.deepEqual(run.timers, []);
  const fired = run.history.filter((h) => h.kind === "timer-fired").map((h) => (h.data as { index: number }).index);
  t.deepEqual(fired, [0, 0, 0, 1]);
  t.is(run.history.filter((h) => h.kind === "timer-cancelled").length, 1, "leaving the state cancels the every timer");
});

test.serial("leaving the state cancels its timers: nothing fires afterwards", async (t) => {
  const wf = await Workflow.deploy(REVIEW);
  const run = await wf.start({ doc: { reminders: 0, escalated: false, note: null }, amount: 500 });
  await run.raise("decision", { ok: true }, { as: { id: "boss" } });
  t.is(run.state, "Approved");
  t.deepEqual(run.timers, []);
  await run.advanceTime("10d");
  t.is(run.entities.doc.reminders, 0);
  t.deepEqual(await run.outbox(), []);
  t.false(run.history.some((h) => h.kind === "timer-fired"));
});

test.serial("an after timer without arms fires once and the run stays", async (t) => {
  const wf = await Workflow.deploy(REVIEW.replace("when (doc.reminders >= 3) -> TimedOut", "").replace("every 1d after 12h", "every 5d"));
  const run = await wf.start({ doc: { reminders: 0, escalated: false, note: null }, amount: 500 });
  await run.advanceTime("4d");
  t.is(run.entities.doc.escalated, true);
  t.is(run.entities.doc.reminders, 0);
  t.deepEqual(run.timers.map((x) => x.index), [0]);
  await run.advanceTime("1d");
  t.is(run.entities.doc.reminders, 1);
  t.is(run.state, "Waiting");
});

test.serial("a cycle of enter arms is a runtime error after 100 entries: the start is refused, nothing kept", async (t) => {
  const wf = await Workflow.deploy(`workflow Loop(n: int)
initial state A { enter { default -> B } }
state B { enter { when (n > 0) -> A  default -> T } }
terminal state T
`);
  const done = await wf.start({ n: 0 });
  t.is(done.state, "T");
  const err = await t.throwsAsync(wf.start({ n: 1 }));
  t.regex(err!.message, /more than 100 state entries in one step/);
});
