/**
 * A message whose text carries a callback link that is no longer live when its step commits is
 * not sent: it is recorded as withdrawn with the reason (language reference, "Delivering through
 * endpoints" and "Sending email"; README "never once the link is no longer live"). Every channel:
 * `send email` (outbox status `withdrawn`, body dropped, `lastError` the reason), `send webhook`
 * and `send message` (delivery `failed`, payload dropped, `endReason` the reason). Through the
 * testing kit on real PostgreSQL; the rows read back as the engine wrote them.
 */
import test from "ava";
import { Workflow } from "slotflow/testing";
import { createDb } from "../../src/db.js";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "deadlinks");

const FLOW = `workflow DeadLinks(po: Po)
entity Po {
  vendorEmail: string
  amount: int
  link: string? @maxLength(400)
}
event Confirm(ok: bool)

initial state Triage {
  enter {
    po.link = confirm.CallbackUrl()
    send email to po.vendorEmail { subject: "Confirm", body: "Answer: " + po.link }
    when (po.amount <= 10) -> Small
    default -> Waiting
  }
  subscribe Confirm(ok) as confirm { }
}

state Waiting {
  subscribe Confirm(ok) as late { Deadline: 3d }
  enter {
    po.link = late.CallbackUrl()
    let first = po.link
    po.link = late.CallbackUrl()
    send email to po.vendorEmail { subject: "First", body: first }
    send email to po.vendorEmail { subject: "Second", body: po.link }
  }
  on late(ok) -> Done
  on late.expired {
    send email to po.vendorEmail { subject: "Still waiting", body: "Please answer: " + po.link }
    send webhook to "portal" { type: "po.late", url: po.link }
    send message to "chat" { text: "Late", link: po.link }
    send email to po.vendorEmail { subject: "Closed", body: "We moved on without you." }
    default -> Escalated
  }
}

terminal state Small
terminal state Done
terminal state Escalated
`;

async function deliveries(runId: string) {
  const db = createDb(process.env.DATABASE_URL!, 1);
  try {
    return await db.delivery.findMany({ where: { runId }, orderBy: { createdAt: "asc" }, select: { statement: true, status: true, payload: true, endReason: true } });
  } finally {
    await db.$disconnect();
  }
}

async function lastErrors(run: { outbox(): Promise<{ lastError: string | null }[]> }) {
  return (await run.outbox()).map((m) => m.lastError);
}

test("a start that mints a link and leaves the state at once: the mail carrying the dead link is withdrawn, with the reason", async (t) => {
  const wf = await Workflow.deploy(FLOW);
  const run = await wf.start({ po: { vendorEmail: "v@vendor.example", amount: 5 } });
  t.is(run.state, "Small");
  const [mail] = await run.outbox();
  t.is(mail.subject, "Confirm");
  t.is(mail.status, "withdrawn");
  t.is(mail.body, null, "the body, which holds the link, is dropped");
  // The run reached a terminal state in the same step: its links died with it.
  t.deepEqual(await lastErrors(run), ["withdrawn: link dead (run-finished)"]);
  t.true(run.history.some((h) => h.kind === "message-withdrawn" && (h.data as { reason?: string }).reason === "withdrawn: link dead (run-finished)"));
});

test("a link retired in the same step: its mail is withdrawn, the newer link's mail is sent", async (t) => {
  const wf = await Workflow.deploy(FLOW);
  const run = await wf.start({ po: { vendorEmail: "v@vendor.example", amount: 500 } });
  t.is(run.state, "Waiting");
  const mails = await run.outbox();
  t.deepEqual(mails.map((m) => [m.subject, m.status]), [["Confirm", "withdrawn"], ["First", "withdrawn"], ["Second", "pending"]]);
  t.deepEqual(await lastErrors(run), ["withdrawn: link dead (cancelled)", "withdrawn: link retired", null]);
});

test("on x.expired, mail, webhook and chat message carrying x's stored link are withdrawn; a message without it goes", async (t) => {
  const wf = await Workflow.deploy(FLOW);
  const run = await wf.start({ po: { vendorEmail: "v@vendor.example", amount: 500 } });
  await run.advanceTime("4d");
  t.is(run.state, "Escalated");
  const mails = await run.outbox();
  t.deepEqual(mails.slice(3).map((m) => [m.subject, m.status, m.body === null]), [["Still waiting", "withdrawn", true], ["Closed", "pending", false]]);
  t.deepEqual((await lastErrors(run)).slice(3), ["withdrawn: link dead (expired)", null]);
  t.deepEqual(await deliveries(run.id), [
    { statement: "webhook", status: "failed", payload: null, endReason: "withdrawn: link dead (expired)" },
    { statement: "message", status: "failed", payload: null, endReason: "withdrawn: link dead (expired)" },
  ]);
});
