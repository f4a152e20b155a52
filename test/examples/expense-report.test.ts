/**
 * examples/expense-report.flow on real PostgreSQL: let, if / else if / else, ??, upper/lower/len/
 * contains, a datetime Deadline, After, a milestone, Requires over run data and event
 * parameters, [Authorize] with a wider Candidates pool, a daily reminder timer (`every 1d`) whose
 * arm has no default and escalates on the third reminder (issue 19: it replaced a dummy `Remind`
 * slot that could be raised once, so the escalation never happened), and a terminal state's enter.
 */
import test from "ava";
import { RefusalError, Workflow } from "../../src/testing/index.js";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "expense");

const input = (total = 420.5, dueBy = "2099-01-01T00:00:00Z") => ({
  report: { employee: "Dana", employeeEmail: "dana@example.com", total, category: "TRAVEL" },
  approvers: ["mia"],
  dueBy,
});

test.serial("enter computes the summary with let, builtins and string concatenation, and mails the receipt link", async (t) => {
  const run = await (await Workflow.deploy("examples/expense-report.flow")).start(input());
  t.is(run.entities.report.summary, "DANA filed travel expenses of 420.5");
  const deadline = run.slots.find((s) => s.alias === "receipts")!.deadline;
  t.is(new Date(deadline as unknown as string).toISOString(), "2099-01-01T00:00:00.000Z");
  const [mail] = await run.outbox();
  t.is(mail.to, "dana@example.com");
  t.true(mail.body!.includes(run.entities.report.receiptUrl as string));
});

test.serial("if / else if / else pick the branch; the milestone mails the managers once the receipts are in", async (t) => {
  for (const [count, suffix] of [
    [0, "; no receipts"],
    [3, "; 3 receipts"],
    [12, "; many receipts"],
  ] as const) {
    const run = await (await Workflow.deploy("examples/expense-report.flow")).start(input());
    await Workflow.Redeem(run.entities.report.receiptUrl as string, { count });
    await run.refresh();
    t.is(run.entities.report.summary, `DANA filed travel expenses of 420.5${suffix}`);
    const mails = await run.outbox();
    // run.outbox() lists the deliveries after the mail (issue 38): the milestone's chat message
    t.deepEqual(
      mails.map((m) => [m.channel, m.subject]),
      [["email", "Upload your receipts"], ["email", "Review Dana"], ["message", `Expenses to review: ${run.entities.report.summary}`]],
    );
    // the managers' mail names the review's task page (x.TaskUrl(), v0.4): a URL, not a link token
    t.regex(mails[1].body!, new RegExp(`\nReview it here: https?://\\S+/inbox/tasks/${run.id}/review$`));
    t.false(mails[1].body!.includes("/api/workflow/callback/"));
  }
});

test.serial("Authorize refuses a candidate the predicate rejects; a finance-lead passes it", async (t) => {
  const run = await (await Workflow.deploy("examples/expense-report.flow")).start(input());
  await Workflow.Redeem(run.entities.report.receiptUrl as string, { count: 1 });
  // "cfo" is a candidate through user("cfo") but has neither role the predicate asks for.
  const denied = await t.throwsAsync(run.raise("review", { approve: true, comment: null }, { as: { id: "cfo", roles: [] } }), { instanceOf: RefusalError });
  t.is(denied!.code, "authorize-denied");
  await run.raise("review", { approve: true, comment: null }, { as: { id: "cfo", roles: ["finance-lead"] } });
  t.is(run.state, "Approved");
  t.is(run.entities.report.decidedBy, "no comment");
  const mails = (await run.outbox()).filter((m) => m.channel === "email");
  t.is(mails.at(-1)!.subject, "Approved");
});

test.serial("review waits on the receipts (After) on the ordinary path too", async (t) => {
  const run = await (await Workflow.deploy("examples/expense-report.flow")).start(input());
  const err = await t.throwsAsync(run.raise("review", { approve: true, comment: "x" }, { as: { id: "mia", roles: ["manager"] } }), { instanceOf: RefusalError });
  t.is(err!.code, "slot-not-open");
});

test.serial("Requires reads run data and the event's parameters: a large report may be rejected but not approved", async (t) => {
  const run = await (await Workflow.deploy("examples/expense-report.flow")).start(input(25_000));
  await Workflow.Redeem(run.entities.report.receiptUrl as string, { count: 2 });
  const err = await t.throwsAsync(run.raise("review", { approve: true, comment: "big" }, { as: { id: "mia", roles: ["manager"] } }), { instanceOf: RefusalError });
  t.is(err!.code, "requires-failed");
  await run.raise("review", { approve: false, comment: "too big" }, { as: { id: "mia", roles: ["manager"] } });
  t.is(run.state, "Rejected");
  t.is(run.entities.report.decidedBy, "too big");
});

test.serial("a daily reminder to the managers once the receipts are in; its arm has no default, so the run stays until the third reminder escalates it to the CFO (issue 19)", async (t) => {
  const run = await (await Workflow.deploy("examples/expense-report.flow")).start(input());
  t.deepEqual(run.timers.map((x) => x.schedule), ["every 1d"]);
  const reminders = async () => (await run.outbox()).filter((m) => m.subject!.startsWith("Reminder")).map((m) => m.subject);
  // receipts not in yet: the timer fires, reminds nobody and counts nothing
  await run.advanceTime("1d");
  t.is(run.entities.report.reminders, null);
  t.deepEqual(await reminders(), []);
  await Workflow.Redeem(run.entities.report.receiptUrl as string, { count: 2 });
  // the arm `when (reminders >= 3)` has no default: two reminders leave the run where it is
  await run.advanceTime("2d");
  t.is(run.state, "Submitted");
  t.is(run.entities.report.reminders, 2);
  t.deepEqual(await reminders(), ["Reminder 1: review Dana's expenses", "Reminder 2: review Dana's expenses"]);
  // the third reminder escalates; leaving the state cancels the timer
  await run.advanceTime("1d");
  t.is(run.state, "Escalated");
  t.is(run.entities.report.reminders, 3);
  t.deepEqual(await reminders(), ["Reminder 1: review Dana's expenses", "Reminder 2: review Dana's expenses", "Reminder 3: review Dana's expenses"]);
  t.deepEqual(run.timers, []);
  t.is(run.history.filter((h) => h.kind === "timer-fired").length, 4);
  t.true(run.history.some((h) => h.kind === "timer-cancelled"));
  await run.advanceTime("3d");
  t.is((await reminders()).length, 3, "no reminder after the escalation");
  // only the CFO decides now (a manager is no longer a candidate)
  const manager = await t.throwsAsync(run.raise("review", { approve: true, comment: null }, { as: { id: "mia", roles: ["manager"] } }), { instanceOf: RefusalError });
  t.is(manager!.code, "not-a-candidate");
  await run.raise("review", { approve: true, comment: "ok after escalation" }, { as: { id: "cfo", roles: ["finance-lead"] } });
  t.is(run.state, "Approved");
});

test.serial("a decision before the third reminder ends the reminders", async (t) => {
  const run = await (await Workflow.deploy("examples/expense-report.flow")).start(input());
  await Workflow.Redeem(run.entities.report.receiptUrl as string, { count: 1 });
  await run.advanceTime("1d");
  t.is(run.entities.report.reminders, 1);
  await run.raise("review", { approve: false, comment: "missing receipt" }, { as: { id: "mia", roles: ["manager"] } });
  t.is(run.state, "Rejected");
  t.deepEqual(run.timers, []);
});

test.serial("@maxLength is enforced on assignment: an over-long summary aborts the step and records an incident", async (t) => {
  const long = "x".repeat(190);
  const wf = await Workflow.deploy("examples/expense-report.flow");
  const err = await t.throwsAsync(
    wf.start({ ...input(), report: { ...input().report, employee: long } }),
    { instanceOf: RefusalError },
  );
  t.is(err!.code, "handler-failed");
  t.regex(err!.message, /@maxLength/);
});

test.serial("the milestone also queues a chat notification to the finance-chat endpoint, in the same step (issue 18)", async (t) => {
  const { sql } = await import("../helpers/db.js");
  const run = await (await Workflow.deploy("examples/expense-report.flow")).start(input());
  t.deepEqual(await sql(process.env.DATABASE_URL!, "SELECT endpoint FROM deliveries WHERE run_id = $1", [run.id]), []);
  await Workflow.Redeem(run.entities.report.receiptUrl as string, { count: 2 });
  const rows = await sql(process.env.DATABASE_URL!, "SELECT endpoint, statement, status, link_sha256 FROM deliveries WHERE run_id = $1", [run.id]);
  t.deepEqual(rows, [{ endpoint: "finance-chat", statement: "message", status: "pending", link_sha256: [] }]);
  await run.refresh();
  t.true(run.history.some((h) => h.kind === "message-queued"));
});
