/**
 * Issue 19 item 6: `send email` gains optional `replyTo` and `cc`, one address each, checked like
 * `to` — in the compiler (types, unknown and repeated fields), at run time (a bad address is a
 * runtime error of the step: nothing queued), in the outbox, and at delivery (cc joins the envelope).
 */
import test from "ava";
import { loadConfig } from "../../src/config.js";
import { createDb } from "../../src/db.js";
import { Codes } from "../../src/lang/codes.js";
import { compile } from "../../src/lang/compile.js";
import { Sealer } from "../../src/engine/sealing/seal.js";
import { deliverOutbox, type Mail } from "../../src/outbox/mailer.js";
import { RefusalError, Workflow } from "../../src/testing/index.js";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "replycc");

const flow = (fields: string) => `workflow Mailer(owner: Owner)
entity Owner { name: string }
event Notify(address: string)
initial state Open {
  subscribe Notify(address) as notify { Candidates: anyone() }
  on notify(address) {
    send email to "ann@example.test" { subject: "Hello", body: "Body"${fields} }
  }
}
terminal state Done
`;

test("replyTo and cc compile; they are strings; unknown or repeated fields are FLOW026", (t) => {
  const ok = compile(flow(`, replyTo: address, cc: "boss@example.test"`));
  t.deepEqual(ok.diagnostics.filter((d) => d.severity === "error"), []);
  const typed = compile(flow(`, replyTo: 3`));
  t.deepEqual(typed.diagnostics.filter((d) => d.severity === "error").map((d) => d.code), [Codes.TypeMismatch]);
  const unknown = compile(flow(`, bcc: address`));
  t.deepEqual(unknown.diagnostics.map((d) => d.code), [Codes.SendEmailFields]);
  const twice = compile(flow(`, cc: address, cc: address`));
  t.deepEqual(twice.diagnostics.map((d) => d.code), [Codes.SendEmailFields]);
});

test.serial("the outbox keeps replyTo and cc; delivery sends them, cc on the envelope", async (t) => {
  const wf = await Workflow.deploy(flow(`\n      replyTo: address\n      cc: "boss@example.test"`));
  const run = await wf.start({ owner: { name: "Ann" } });
  await run.raise("notify", { address: "reply@example.test" }, { as: { id: "u" } });
  const [mail] = await run.outbox();
  t.like(mail, { to: "ann@example.test", replyTo: "reply@example.test", cc: "boss@example.test", status: "pending" });

  const config = loadConfig();
  const db = createDb(config.databaseUrl, 2);
  t.teardown(() => db.$disconnect());
  const sent: Mail[] = [];
  const row = await db.outboxMessage.findFirstOrThrow({ where: { runId: run.id } });
  const sealer = new Sealer(config.sealKeys);
  const outcome = await deliverOutbox(db, sealer, { kind: "smtp", send: async (m) => (sent.push(m), "<id@test>") }, { outboxId: row.id, runId: row.runId });
  t.is(outcome, "sent");
  t.like(sent[0], { to: "ann@example.test", replyTo: "reply@example.test", cc: "boss@example.test" });
});

test.serial("a cc or replyTo that is not exactly one address is a runtime error: nothing queued, the slot stays open", async (t) => {
  const wf = await Workflow.deploy(flow(`, cc: address`));
  for (const address of ["a@example.test, b@example.test", "Boss <boss@example.test>", ""]) {
    const run = await wf.start({ owner: { name: "Ann" } });
    const err = await t.throwsAsync(run.raise("notify", { address }, { as: { id: "u" } }), { instanceOf: RefusalError });
    t.regex(err!.message, /cc/);
    t.deepEqual(await run.outbox(), []);
    await run.refresh();
    t.is(run.slots.find((s) => s.alias === "notify")?.status, "open");
  }
});
