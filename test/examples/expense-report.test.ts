/**
 * examples/expense-report.flow on real PostgreSQL: let, if / else if / else, ??, upper/lower/len/
 * contains, a datetime Deadline, After, a milestone, Requires over run data and event
 * parameters, [Authorize] with a wider Candidates pool, an arm without default, and a terminal
 * state's enter.
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
    t.deepEqual(
      mails.map((m) => m.subject),
      ["Upload your receipts", "Review Dana"],
    );
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
  const mails = await run.outbox();
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

test.serial("an arm with no default leaves the run in place until its condition holds", async (t) => {
  const run = await (await Workflow.deploy("examples/expense-report.flow")).start(input());
  const manager = { as: { id: "mia", roles: ["manager"] } };
  await run.raise("remind", undefined, manager);
  t.is(run.state, "Submitted");
  t.is(run.entities.report.reminders, 1);
  // The remind slot completed; the run stayed, so it is no longer open for a second reminder.
  const again = await t.throwsAsync(run.raise("remind", undefined, manager), { instanceOf: RefusalError });
  t.is(again!.code, "slot-closed");
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
