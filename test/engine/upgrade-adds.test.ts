/**
 * Issue 19 item 3 (language reference §10): a deploy that adds a `subscribe` or a timer to the
 * state where live runs wait gives it to those runs — open or waiting on its `After`, its deadline
 * counted from the upgrade, fanned out over its list — records what it added in the history, and
 * does not run `enter` again. Through the testing kit on real PostgreSQL.
 */
import test from "ava";
import { Workflow } from "../../src/testing/index.js";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "upgradeadds");

const v1 = (name: string) => `workflow ${name}(order: Order, reviewers: list<string>)
entity Order { entered: int; withdrawn: bool; pinged: int }
event Approve(ok: bool)
event Withdraw(reason: string)
event Sign()
initial state Review {
  enter { order.entered = order.entered + 1 }
  subscribe Approve(ok) as decision { Candidates: anyone() }
  on decision(ok) -> Done
}
terminal state Done
terminal state Withdrawn
`;

const withAdded = (name: string, added: string) =>
  v1(name).replace("  on decision(ok) -> Done\n", `  on decision(ok) -> Done\n${added}\n`);

const input = { order: { entered: 0, withdrawn: false, pinged: 0 }, reviewers: ["ann", "bob"] };
const HOUR = 3_600_000;

type Added = { from: number; to: number; added: { slots: string[]; timers: number[] } };
const upgraded = (run: { history: { kind: string; data: unknown }[] }) => run.history.filter((h) => h.kind === "upgraded").map((h) => h.data as Added);

test.serial("a slot added with a Deadline is open in the upgraded run, its deadline counted from the upgrade; enter does not run again", async (t) => {
  const wf = await Workflow.deploy(v1("UpDeadline"));
  const run = await wf.start(input);
  await run.advanceTime("5h"); // the run has waited 5 hours when v2 is deployed
  const before = Date.now();
  const v2 = await Workflow.deploy(
    withAdded("UpDeadline", "  subscribe Withdraw(reason) as withdraw {\n Candidates: anyone()\n Deadline: 2h }\n  on withdraw(reason) { order.withdrawn = true\n default -> Withdrawn }\n  on withdraw.expired { order.pinged = 99 }"),
  );
  t.is(v2.version, 2);
  await run.refresh();
  t.is(run.version, 2);
  const withdraw = run.slots.find((s) => s.alias === "withdraw")!;
  t.is(withdraw.status, "open");
  const deadline = new Date(withdraw.deadline!).getTime();
  t.true(Math.abs(deadline - before - 2 * HOUR) < 60_000, "two hours from the upgrade, not from the state's entry");
  t.is(run.entities.order.entered, 1, "enter did not run again");
  t.deepEqual(upgraded(run), [{ from: 1, to: 2, added: { slots: ["withdraw"], timers: [] } }]);
  // The new slot works like any other: the cancel path reaches the run already in flight.
  await run.raise("withdraw", { reason: "changed my mind" }, { as: { id: "req" } });
  t.is(run.state, "Withdrawn");
  t.is(run.entities.order.withdrawn, true);
});

test.serial("a slot added with After waits until its predecessor completes, then opens", async (t) => {
  const source = (name: string) =>
    v1(name)
      .replace("event Sign()", "event Sign()\nevent Check()")
      .replace("  subscribe Approve(ok) as decision { Candidates: anyone() }\n", "  subscribe Approve(ok) as decision { Candidates: anyone() }\n  subscribe Check() as check { Candidates: anyone() }\n");
  const wf = await Workflow.deploy(source("UpAfter"));
  const run = await wf.start(input);
  await Workflow.deploy(source("UpAfter").replace("  on decision(ok) -> Done\n", "  on decision(ok) -> Done\n  subscribe Sign() as sign { After: check\n Deadline: 1d }\n"));
  await run.refresh();
  t.deepEqual(run.slots.filter((s) => s.alias === "sign").map((s) => [s.status, s.deadline]), [["waiting", null]]);
  await run.raise("check", {}, { as: { id: "u" } });
  const sign = run.slots.find((s) => s.alias === "sign")!;
  t.is(sign.status, "open");
  t.truthy(sign.deadline);
  t.deepEqual(upgraded(run)[0].added, { slots: ["sign"], timers: [] });
});

test.serial("a fanned-out slot added by an upgrade gets one slot per element of its list, evaluated at the upgrade", async (t) => {
  const wf = await Workflow.deploy(v1("UpFan"));
  const run = await wf.start(input);
  await Workflow.deploy(withAdded("UpFan", "  subscribe Sign() as signs for each r in reviewers { Candidates: user(r) }"));
  await run.refresh();
  t.deepEqual(
    run.slots.filter((s) => s.alias === "signs").map((s) => [s.element, s.elementValue, s.status]),
    [
      [0, "ann", "open"],
      [1, "bob", "open"],
    ],
  );
  await run.raise("signs", {}, { as: { id: "bob" }, element: 1 });
  t.is(run.slots.find((s) => s.alias === "signs" && s.element === 1)!.status, "completed");
});

test.serial("a timer added by an upgrade starts counting from the upgrade and fires", async (t) => {
  const wf = await Workflow.deploy(v1("UpTimer"));
  const run = await wf.start(input);
  await run.advanceTime("3h");
  const before = Date.now();
  await Workflow.deploy(withAdded("UpTimer", "  every 1h { order.pinged = order.pinged + 1 }"));
  await run.refresh();
  t.deepEqual(run.timers.map((x) => x.schedule), ["every 1h"]);
  t.true(Math.abs(new Date(run.timers[0].next!).getTime() - before - HOUR) < 60_000);
  t.deepEqual(upgraded(run)[0].added, { slots: [], timers: [0] });
  await run.advanceTime("2h");
  t.is(run.entities.order.pinged, 2);
});

test.serial("runs in a state that gained nothing get a plain upgraded entry; finished runs are untouched", async (t) => {
  const wf = await Workflow.deploy(v1("UpPlain"));
  const waiting = await wf.start(input);
  const done = await wf.start(input);
  await done.raise("decision", { ok: true }, { as: { id: "x" } });
  await Workflow.deploy(v1("UpPlain").replace("terminal state Withdrawn", "terminal state Withdrawn\nterminal state Archived"));
  await waiting.refresh();
  await done.refresh();
  t.deepEqual(upgraded(waiting), [{ from: 1, to: 2 } as unknown as Added]);
  t.deepEqual(upgraded(done), []);
});

test.serial("a call slot added by an upgrade starts its call: the callee is asked and its answer routes the run (issue 40)", async (t) => {
  Workflow.mockHttp("upgrade-bureau", () => ({ body: { ok: true } }));
  const wf = await Workflow.deploy(v1("UpCall"));
  const run = await wf.start(input);
  t.deepEqual(await run.calls(), []);
  await Workflow.deploy(withAdded("UpCall", '  call http "upgrade-bureau" as check returns Approve { Path: "/check" }\n  on check(ok) -> Withdrawn'));
  await run.refresh();
  t.deepEqual(upgraded(run)[0].added, { slots: ["check"], timers: [] });
  const [call] = await run.calls();
  t.like(call, { alias: "check", type: "http", endpoint: "upgrade-bureau" });
  // the kit's sweep queues the due call, as the sweeper does in a deployment (calls/overdue.ts)
  await run.advanceTime("1m");
  await run.refresh();
  t.is(run.state, "Withdrawn");
  t.like((await run.calls())[0], { status: "answered" });
});
