/**
 * examples/support-ticket.flow on real PostgreSQL: Authorize reading principal members,
 * Candidates computed from run data, Requires over an event parameter, a loop back to an earlier
 * state (a new visit with a new link; the old one dead), list literals and contains().
 */
import test from "ava";
import { RefusalError, Workflow } from "../../src/testing/index.js";
import { sql } from "../helpers/db.js";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "ticket");

const input = (tier = "basic") => ({ ticket: { subject: "Printer on fire", customerEmail: "cus@example.com" }, tier });
const agent = { as: { id: "sam", email: "sam@help.example", roles: ["support"] } };

test.serial("Authorize reads principal members: a support principal without an email is refused", async (t) => {
  const run = await (await Workflow.deploy("examples/support-ticket.flow")).start(input());
  t.truthy(run.entities.ticket.openedAt);
  const err = await t.throwsAsync(run.raise("assign", { agent: "sam" }, { as: { id: "sam", roles: ["support"] } }), { instanceOf: RefusalError });
  t.is(err!.code, "authorize-denied");
  await run.raise("assign", { agent: "sam" }, agent);
  t.is(run.state, "Working");
});

test.serial("the assignee (computed Candidates) resolves; Requires checks the event's parameter", async (t) => {
  const run = await (await Workflow.deploy("examples/support-ticket.flow")).start(input());
  await run.raise("assign", { agent: "sam" }, agent);
  const other = await t.throwsAsync(run.raise("resolve", { resolution: "rebooted it" }, { as: { id: "kim" } }), { instanceOf: RefusalError });
  t.is(other!.code, "not-a-candidate");
  const short = await t.throwsAsync(run.raise("resolve", { resolution: "ok" }, { as: { id: "sam" } }), { instanceOf: RefusalError });
  t.is(short!.code, "requires-failed");
  await run.raise("resolve", { resolution: "replaced the fuser" }, { as: { id: "sam" } });
  t.is(run.state, "AwaitingFeedback");
  const [mail] = await run.outbox();
  t.is(mail.subject, 'Was "Printer on fire" solved?');
});

test.serial("an unhappy customer sends the ticket back to Working; the next visit mints a new link and the old one is dead", async (t) => {
  const run = await (await Workflow.deploy("examples/support-ticket.flow")).start(input());
  await run.raise("assign", { agent: "sam" }, agent);
  await run.raise("resolve", { resolution: "replaced the fuser" }, { as: { id: "sam" } });
  const first = run.entities.ticket.feedbackUrl as string;
  await Workflow.Redeem(first, { satisfied: false, comment: "still smoking" });
  await run.refresh();
  t.is(run.state, "Working");
  await run.raise("resolve", { resolution: "replaced the printer" }, { as: { id: "sam" } });
  const second = run.entities.ticket.feedbackUrl as string;
  t.not(first, second);
  const dead = await t.throwsAsync(Workflow.Redeem(first, { satisfied: true, comment: null }), { instanceOf: RefusalError });
  t.is(dead!.code, "link-burned");
  await Workflow.Redeem(second, { satisfied: true, comment: null });
  await run.refresh();
  t.is(run.state, "Closed");
  t.is(run.entities.ticket.satisfied, true);
});

test.serial("escalation returns gold tickets to Triage (list literal + contains) and keeps others in Working", async (t) => {
  const gold = await (await Workflow.deploy("examples/support-ticket.flow")).start(input("gold"));
  await gold.raise("assign", { agent: "sam" }, agent);
  await gold.raise("escalate", undefined, agent);
  t.is(gold.state, "Triage");
  t.is(gold.entities.ticket.escalations, 1);

  const basic = await (await Workflow.deploy("examples/support-ticket.flow")).start(input("basic"));
  await basic.raise("assign", { agent: "sam" }, agent);
  await basic.raise("escalate", undefined, agent);
  t.is(basic.state, "Working");
});

test.serial("an unassigned ticket expires after its deadline: on assign.expired counts an escalation and moves on to Working", async (t) => {
  const run = await (await Workflow.deploy("examples/support-ticket.flow")).start(input());
  t.is(await Workflow.sweep(), 0, "nothing is due yet");
  await sql(process.env.DATABASE_URL!, "UPDATE slots SET deadline = now() - interval '1 second' WHERE run_id = $1 AND alias = 'assign'", [run.id]);
  t.is(await Workflow.sweep(), 1);
  await run.refresh();
  t.is(run.state, "Working");
  t.is(run.entities.ticket.escalations, 1);
  t.is(run.slots.find((s) => s.alias === "assign")!.status, "expired");
  t.is(await Workflow.sweep(), 0, "a slot expires once");
});
