/**
 * Issue 23 × issues 18 and 19: an operator's cancel ends everything the run owns — its slots and
 * their links (run-cancelled), its scheduled timers (they never fire afterwards), its unsent mail
 * and its pending webhook/chat deliveries (withdrawn, payload dropped, never sent). Through the
 * testing kit's `run.cancel` on real PostgreSQL.
 */
import test from "ava";
import { RefusalError, Workflow } from "../../src/testing/index.js";
import { sql } from "../helpers/db.js";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "cancel_all");

const SOURCE = `workflow Hold(doc: Doc)
entity Doc { url: string? @maxLength(400) }
event Answer(ok: bool)
initial state Waiting {
  subscribe Answer(ok) as answer
  enter {
    doc.url = answer.CallbackUrl()
    send email to "boss@example.com" { subject: "Answer", body: doc.url }
    send webhook to "portal" { type: "hold.created", url: doc.url }
    send message to "chat" { text: "A hold is waiting" }
  }
  every 1d {
    send email to "boss@example.com" { subject: "Reminder", body: "still waiting" }
  }
  on answer(ok) -> Done
}
terminal state Done
`;

test.serial("cancel: timers cancelled and never fired, mail and deliveries withdrawn, links dead; a second cancel is 409 run-finished", async (t) => {
  const wf = await Workflow.deploy(SOURCE);
  const run = await wf.start({ doc: { url: null } });
  t.is(run.timers.length, 1);
  const db = process.env.DATABASE_URL!;
  const pending = await sql(db, `SELECT count(*)::int AS n FROM deliveries WHERE run_id = '${run.id}' AND status = 'pending'`);
  t.is(pending[0].n, 2, "the webhook and the chat message wait to be delivered");

  await run.cancel("withdrawn by the requester", { actor: "ops@example.com" });
  t.is(run.status, "cancelled");
  t.deepEqual(run.timers, [], "no timer is scheduled any more");
  t.deepEqual(run.slots.map((s) => [s.alias, s.status]), [["answer", "cancelled"]]);

  const deliveries = await sql(db, `SELECT status, end_reason, payload FROM deliveries WHERE run_id = '${run.id}'`);
  t.deepEqual(deliveries.map((d) => [d.status, d.end_reason, d.payload]), [
    ["failed", "withdrawn: the run was cancelled", null],
    ["failed", "withdrawn: the run was cancelled", null],
  ]);
  // run.outbox() lists the mail, then the deliveries (issue 38)
  t.deepEqual((await run.outbox()).map((m) => [m.channel, m.status]), [["email", "withdrawn"], ["webhook", "failed"], ["message", "failed"]]);
  const links = await sql(db, `SELECT status, end_reason FROM links WHERE run_id = '${run.id}'`);
  t.deepEqual(links.map((l) => [l.status, l.end_reason]), [["dead", "run-cancelled"]]);
  const withdrawn = run.history.find((h) => h.kind === "messages-withdrawn");
  t.like(withdrawn?.data, { count: 3 });

  // the timer's day passes: nothing fires, no reminder is queued
  await run.advanceTime("2d");
  t.is((await run.outbox()).length, 3);
  t.false(run.history.some((h) => h.kind === "timer-fired"));

  const again = await t.throwsAsync(run.cancel("twice"), { instanceOf: RefusalError });
  t.is(again?.code, "run-finished");
});
