/**
 * A message whose text carries a callback link that is no longer live when its step commits is
 * not sent: it is recorded as withdrawn with the reason (language reference, "Delivering through
 * endpoints" and "Sending email"; README "never once the link is no longer live"), and the worker
 * logs it at `warn` (issue 38). `send email` (outbox status `withdrawn`, body dropped, `lastError`
 * the reason) and `send message` (delivery `failed`, payload dropped, `endReason` the reason). A
 * `send webhook` is data (v0.5 "Answers people can trust"): it is queued whatever links it carries.
 * Through the testing kit on real PostgreSQL; the rows read back as the engine wrote them.
 */
import test from "ava";
import { Workflow } from "slotflow/testing";
import { Writable } from "node:stream";
import { loadConfig } from "../../src/config.js";
import { createDb } from "../../src/db.js";
import { applyCommand } from "../../src/engine/commands/apply.js";
import { prepareStart } from "../../src/engine/commands/prepare.js";
import { Sealer } from "../../src/engine/sealing/seal.js";
import { createLogger } from "../../src/log.js";
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

test("on x.expired, mail and chat message carrying x's stored link are withdrawn; the webhook carrying it is data and is queued; a message without it goes", async (t) => {
  const wf = await Workflow.deploy(FLOW);
  const run = await wf.start({ po: { vendorEmail: "v@vendor.example", amount: 500 } });
  await run.advanceTime("4d");
  t.is(run.state, "Escalated");
  const outbox = await run.outbox();
  const mails = outbox.filter((m) => m.channel === "email");
  t.deepEqual(mails.slice(3).map((m) => [m.subject, m.status, m.body === null]), [["Still waiting", "withdrawn", true], ["Closed", "pending", false]]);
  t.deepEqual(mails.map((m) => m.lastError).slice(3), ["withdrawn: link dead (expired)", null]);
  const link = run.entities.po.link as string;
  // run.outbox() lists the deliveries after the mail (issue 38), each with its status
  t.deepEqual(
    outbox.filter((m) => m.channel !== "email").map((m) => [m.channel, m.endpoint, m.status, m.lastError, m.data]),
    [
      ["webhook", "portal", "pending", null, { url: link }],
      ["message", "chat", "failed", "withdrawn: link dead (expired)", null],
    ],
  );
  const rows = await deliveries(run.id);
  t.like(rows[0], { statement: "webhook", status: "pending", endReason: null });
  t.not(rows[0].payload, null, "the webhook keeps its sealed payload");
  t.deepEqual(rows[1], { statement: "message", status: "failed", payload: null, endReason: "withdrawn: link dead (expired)" });
});

const SENDS = `workflow Sends(po: Po)
entity Po { email: string; link: string? @maxLength(400) }
event Confirm(ok: bool)
initial state Triage {
  subscribe Confirm(ok) as confirm { }
  enter {
    po.link = confirm.CallbackUrl()
    send email to po.email { subject: "Confirm", body: "Answer: " + po.link }
    send message to "chat" { text: "Confirm", link: po.link }
    send webhook to "erp" { type: "po.created", po: po }
    default -> Closed
  }
}
terminal state Closed
`;

test("a withdrawn email and chat message are logged at warn with the run, the message's id and the reason, never the link; the webhook is not withdrawn (issue 38)", async (t) => {
  await Workflow.deploy(SENDS);
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
  const db = createDb(process.env.DATABASE_URL!, 1);
  try {
    const sealer = new Sealer(loadConfig(process.env, { secrets: ["SLOTFLOW_SEAL_KEY"] }).sealKeys);
    const deps = { db, sealer, baseUrl: "http://slotflow.test", log: createLogger("info", sink) };
    const prepared = await prepareStart(db, "Sends", { po: { email: "v@vendor.example" } });
    if (!prepared.ok) throw new Error(prepared.refusal.detail);
    const applied = await applyCommand(deps, prepared.cmd);
    t.true(applied.outcome.ok);
    const runId = prepared.cmd.runId;
    const [mail] = await db.outboxMessage.findMany({ where: { runId } });
    const ds = await db.delivery.findMany({ where: { runId }, orderBy: { createdAt: "asc" } });
    t.deepEqual(ds.map((d) => [d.statement, d.status]), [["message", "failed"], ["webhook", "pending"]]);
    const warned = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.level === 40);
    t.deepEqual(
      warned.map((l) => ({ runId: l.runId, channel: l.channel, outboxId: l.outboxId, deliveryId: l.deliveryId, endpoint: l.endpoint, reason: l.reason })),
      [
        { runId, channel: "email", outboxId: mail.id, deliveryId: undefined, endpoint: undefined, reason: "withdrawn: link dead (run-finished)" },
        { runId, channel: "message", outboxId: undefined, deliveryId: ds[0].id, endpoint: "chat", reason: "withdrawn: link dead (run-finished)" },
      ],
    );
    t.true(warned.every((l) => /withdrawn/.test(String(l.msg))));
    const [row] = await db.entityRow.findMany({ where: { runId } });
    const token = String(sealer.unsealJson(row.data) && (sealer.unsealJson(row.data) as { link: string }).link).split("/").pop()!;
    t.true(token.length >= 43);
    t.false(lines.join("").includes(token), "no log line carries the link's token");
  } finally {
    await db.$disconnect();
  }
});
