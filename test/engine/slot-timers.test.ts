/**
 * Issue 43 item 3 (language reference "Timers on a slot, per element"), through the engine on real
 * PostgreSQL (testing kit): a timer inside a `subscribe` runs once per open element, its clock from
 * the slot's opening; `x.CallbackUrl()` in it mints a fresh link for that element, retiring the
 * previous one (410 `link-retired`) while the new one works; an answered element's timer stops, the
 * quorum and leaving the state stop the rest; a waiting slot's timer starts when it opens; an
 * upgrade adds a kept slot's new timers to the open elements of live runs.
 */
import test from "ava";
import { RefusalError, Workflow, type TestRun } from "../../src/testing/index.js";
import { STATUS } from "../../src/web/problems.js";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "slottimers");

const HOUR = 3_600_000;

const SIGNING = (name: string, timers: string) => `workflow ${name}(doc: Doc, directors: list<string>)
entity Doc { reminders: int; status: string? }
event Sign(agree: bool)
event Approve(ok: bool)
initial state Collecting {
  subscribe Sign(agree) as signoff for each d in directors {
    Quorum: 2
    each { send email to d { subject: "Please sign", body: signoff.CallbackUrl() } }
${timers}
  }
  on signoff(agree) {
    when (signoff.done) -> Signed
  }
}
terminal state Signed
`;

const REMINDER = `    every 2d {
      doc.reminders = doc.reminders + 1
      send email to d { subject: "Reminder: please sign", body: signoff.CallbackUrl() }
    }`;

const input = { doc: { reminders: 0, status: null }, directors: ["ann@example.com", "bob@example.com", "cem@example.com"] };
const LINK = /https?:\/\/\S+\/api\/workflow\/callback\/\S+/;

/** The link in the last mail of `subject` to each address. */
async function lastLinks(run: TestRun, subject: string): Promise<Map<string, string>> {
  const mails = (await run.outbox()).filter((m) => m.subject === subject);
  return new Map(mails.map((m) => [m.to, LINK.exec(m.body!)![0]]));
}

test.serial("a per-element reminder mints a fresh link: it works while the old one answers 410 link-retired", async (t) => {
  const wf = await Workflow.deploy(SIGNING("Remind", REMINDER));
  const before = Date.now();
  const run = await wf.start(input);
  t.deepEqual(run.timers, [], "no state timers");
  t.deepEqual(run.slotTimers.map((x) => [x.alias, x.element, x.index, x.schedule]), [
    ["signoff", 0, 0, "every 2d"],
    ["signoff", 1, 0, "every 2d"],
    ["signoff", 2, 0, "every 2d"],
  ]);
  for (const x of run.slotTimers) t.true(Math.abs(new Date(x.next!).getTime() - before - 48 * HOUR) < 60_000);
  const first = await lastLinks(run, "Please sign");
  t.is(first.size, 3);

  await run.advanceTime("2d");
  t.is(run.entities.doc.reminders, 3, "one reminder per open element");
  const reminders = await lastLinks(run, "Reminder: please sign");
  t.deepEqual([...reminders.keys()].sort(), input.directors);
  for (const [to, url] of reminders) t.not(url, first.get(to));

  // The first link of ann was retired by her reminder's link: 410 link-retired.
  const old = await t.throwsAsync(Workflow.Redeem(first.get("ann@example.com")!, { agree: true }), { instanceOf: RefusalError });
  t.is(old!.code, "link-retired");
  t.is(STATUS[old!.code], 410, "the callback endpoint answers it as 410");
  t.is(old!.extra.reason, "retired");
  t.true(run.history.some((h) => h.kind === "link-retired" && (h.data as { element: number }).element === 0));
  // The new one works.
  await Workflow.Redeem(reminders.get("ann@example.com")!, { agree: true });
  await run.refresh();
  t.deepEqual(run.slots.map((s) => s.status), ["completed", "open", "open"]);
  t.deepEqual(run.slotTimers.map((x) => x.element), [1, 2], "ann's timer stopped when her slot closed");

  await run.advanceTime("2d");
  t.is(run.entities.doc.reminders, 5, "only bob and cem are reminded");
  const mails = (await run.outbox()).filter((m) => m.subject === "Reminder: please sign");
  t.deepEqual(mails.filter((m) => m.to === "ann@example.com").length, 1);

  const bob = (await lastLinks(run, "Reminder: please sign")).get("bob@example.com")!;
  await Workflow.Redeem(bob, { agree: true });
  await run.refresh();
  t.is(run.state, "Signed");
  t.deepEqual(run.slotTimers, []);
  await run.advanceTime("6d");
  t.is(run.entities.doc.reminders, 5, "nothing fires once the quorum is in and the state is left");
  const fired = run.history.filter((h) => h.kind === "timer-fired").map((h) => (h.data as { alias: string; element: number }).element);
  t.deepEqual(fired.sort(), [0, 1, 1, 2, 2]);
  t.true(run.history.some((h) => h.kind === "timer-cancelled" && (h.data as { alias?: string }).alias === "signoff"));
});

test.serial("a timer on a waiting slot starts when the slot opens; an after timer fires once and may move the run", async (t) => {
  const wf = await Workflow.deploy(`workflow Chain(doc: Doc)
entity Doc { reminders: int; status: string? }
event Approve(ok: bool)
initial state Review {
  subscribe Approve(ok) as first { Candidates: anyone() }
  subscribe Approve(ok) as second {
    Candidates: anyone()
    After: first
    after 1d { doc.reminders = doc.reminders + 1 }
    after 3d -> Late
  }
  on second(ok) -> Done
}
terminal state Done
terminal state Late
`);
  const run = await wf.start({ doc: { reminders: 0, status: null } });
  t.deepEqual(run.slotTimers, []);
  await run.advanceTime("2d");
  t.is(run.entities.doc.reminders, 0, "the clock has not started: the slot waits");
  await run.raise("first", { ok: true }, { as: { id: "ann" } });
  t.deepEqual(run.slotTimers.map((x) => [x.alias, x.element, x.index]), [["second", null, 0], ["second", null, 1]]);
  await run.advanceTime("1d");
  t.is(run.entities.doc.reminders, 1);
  t.is(run.state, "Review");
  await run.advanceTime("2d");
  t.is(run.state, "Late");
  t.is(run.entities.doc.reminders, 1);
});

test.serial("an upgrade adds a kept slot's new timer to each open element of a live run, its clock from the upgrade", async (t) => {
  const wf = await Workflow.deploy(SIGNING("UpRemind", ""));
  const run = await wf.start(input);
  await Workflow.Redeem((await lastLinks(run, "Please sign")).get("cem@example.com")!, { agree: true });
  await run.advanceTime("5h");
  const before = Date.now();
  const v2 = await Workflow.deploy(SIGNING("UpRemind", REMINDER));
  t.is(v2.version, 2);
  await run.refresh();
  t.deepEqual(run.slotTimers.map((x) => x.element), [0, 1], "the answered element gets none");
  for (const x of run.slotTimers) t.true(Math.abs(new Date(x.next!).getTime() - before - 48 * HOUR) < 60_000);
  const up = run.history.filter((h) => h.kind === "upgraded").map((h) => h.data);
  t.deepEqual(up, [{ from: 1, to: 2, added: { slots: [], timers: [], slotTimers: [{ alias: "signoff", element: 0, index: 0 }, { alias: "signoff", element: 1, index: 0 }] } }]);
  await run.advanceTime("2d");
  t.is(run.entities.doc.reminders, 2);
});

test.serial("a slot that expires stops its timers; so does drop slot", async (t) => {
  const wf = await Workflow.deploy(`workflow Stops(doc: Doc)
entity Doc { reminders: int; status: string? }
event Approve(ok: bool)
initial state Review {
  subscribe Approve(ok) as late {
    Candidates: anyone()
    Deadline: 90m
    every 1h { doc.reminders = doc.reminders + 1 }
  }
  subscribe Approve(ok) as dropped {
    Candidates: anyone()
    every 1h { doc.reminders = doc.reminders + 100 }
  }
  on late.expired { drop slot dropped }
}
terminal state Done
`);
  const run = await wf.start({ doc: { reminders: 0, status: null } });
  t.is(run.slotTimers.length, 2);
  await run.advanceTime("5h");
  t.is(run.entities.doc.reminders, 101, "each fired once, at 1h; at 90m one slot expired and the other was dropped");
  t.deepEqual(run.slots.map((s) => `${s.alias}=${s.status}`).sort(), ["dropped=dropped", "late=expired"]);
  t.deepEqual(run.slotTimers, []);
});
