/**
 * examples/purchase-approval.flow through the engine on real PostgreSQL (testing kit): routing on
 * entry approves small amounts at once; reminders every two days after one, each with a fresh link
 * (the previous one is replaced); the escalation after five days; the timeout at seven; and the
 * timers end when the approver answers (issue 19).
 */
import test from "ava";
import { RefusalError, Workflow } from "../../src/testing/index.js";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "purchase");

const input = (amount: number) => ({
  request: { item: "Laptop", amount, approverEmail: "boss@example.com", approvalUrl: null, reminders: 0, escalated: false, note: null },
  autoApproveUpTo: 100,
});

test.serial("a small amount is approved on entry, in the start step: no link, no timer", async (t) => {
  const wf = await Workflow.deploy("examples/purchase-approval.flow");
  const run = await wf.start(input(40));
  t.is(run.state, "Approved");
  t.is(run.entities.request.note, "approved automatically");
  t.deepEqual(run.timers, []);
  t.deepEqual((await run.outbox()).map((m) => m.subject), ["Approved: Laptop"]);
});

test.serial("reminders after 1d and every 2d carry a fresh link; the replaced link no longer works", async (t) => {
  const wf = await Workflow.deploy("examples/purchase-approval.flow");
  const run = await wf.start(input(500));
  t.is(run.state, "Review");
  t.deepEqual(run.timers.map((x) => x.schedule), ["every 2d after 1d", "after 5d"]);
  const firstUrl = run.entities.request.approvalUrl as string;
  await run.advanceTime("1d");
  t.is(run.entities.request.reminders, 1);
  const secondUrl = run.entities.request.approvalUrl as string;
  t.not(secondUrl, firstUrl);
  await run.advanceTime("2d");
  t.is(run.entities.request.reminders, 2);
  const subjects = (await run.outbox()).map((m) => m.subject);
  t.deepEqual(subjects, ["Approve the purchase of Laptop", "Reminder: approve the purchase of Laptop", "Reminder: approve the purchase of Laptop"]);
  const stale = await t.throwsAsync(Workflow.Redeem(firstUrl, { ok: true, note: null }));
  t.true(stale instanceof RefusalError);
  await Workflow.Redeem(run.entities.request.approvalUrl as string, { ok: true, note: "fine" });
  await run.refresh();
  t.is(run.state, "Approved");
  t.deepEqual(run.timers, []);
  await run.advanceTime("10d");
  t.is(run.entities.request.reminders, 2, "no reminder after the answer");
});

test.serial("five days without an answer: finance is told; a large amount moves to Escalated", async (t) => {
  const wf = await Workflow.deploy("examples/purchase-approval.flow");
  const modest = await wf.start(input(500));
  await modest.advanceTime("5d");
  t.is(modest.state, "Review");
  const told = (await modest.outbox()).find((m) => m.to === "finance-leads@example.com" && m.subject === "Escalation: Laptop (500)");
  t.truthy(told);
  t.regex(told!.body!, new RegExp(`Follow the request here: https?://\\S+/inbox/tasks/${modest.id}/decision$`), "the task page (x.TaskUrl(), v0.4)");
  // issue 38 M2: the task page is for finance leads (Candidates), not for anyone signed in
  const stranger = await t.throwsAsync(modest.raise("decision", { ok: true, note: null }, { as: { id: "eve", roles: [] } }), { instanceOf: RefusalError });
  t.is(stranger!.code, "not-a-candidate");
  await modest.raise("decision", { ok: true, note: "approved by finance" }, { as: { id: "fin", roles: ["finance-lead"] } });
  t.is(modest.state, "Approved");
  const large = await wf.start(input(5000));
  await large.advanceTime("5d");
  t.is(large.state, "Escalated");
  t.is(large.entities.request.escalated, true);
  t.deepEqual(large.timers, [], "the Review timers ended with the state");
  await large.raise("financeDecision", { ok: false, note: "too much" }, { as: { id: "fin", roles: ["finance-lead"] } });
  t.is(large.state, "Declined");
});

test.serial("seven days without an answer: the decision expires and the request times out", async (t) => {
  const wf = await Workflow.deploy("examples/purchase-approval.flow");
  const run = await wf.start(input(500));
  await run.advanceTime("6d");
  t.is(run.state, "Review");
  t.is(run.entities.request.reminders, 3, "reminders at 1d, 3d and 5d");
  await run.advanceTime("1d");
  t.is(run.state, "TimedOut");
  t.deepEqual(run.timers, []);
});
