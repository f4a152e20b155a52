/**
 * `send email to X` takes exactly one plain address (issue 8 item 18), through the testing kit
 * against a real database: lists, groups, display names, CR/LF and the empty string are a runtime
 * error of the step (handler-failed: nothing queued, an incident recorded, the slot still open);
 * `isEmailAddress()` lets a workflow check first; a queued row whose recipient breaks the rule
 * fails at delivery at once instead of staying pending.
 */
import test from "ava";
import { randomUUID } from "node:crypto";
import { loadConfig } from "../../src/config.js";
import { createDb } from "../../src/db.js";
import { isEmailAddress } from "../../src/lang/runtime/email-address.js";
import { Sealer } from "../../src/engine/sealing/seal.js";
import { deliverOutbox, type Mail } from "../../src/outbox/mailer.js";
import { RefusalError, Workflow } from "../../src/testing/index.js";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "mailto");

const someone = { as: { id: "ops", roles: [] } };
const deploy = () => Workflow.deploy("test/fixtures/mail-recipient.flow");

const REFUSED = [
  "victim@example.test, evil@attacker.test",
  "victim@example.test;evil@attacker.test",
  "Friends: victim@example.test, evil@attacker.test;",
  "Victim <victim@example.test>",
  "<victim@example.test>",
  "victim@example.test\r\nBcc: evil@attacker.test",
  " victim@example.test",
  '"evil@attacker.test"@example.test',
  "victim@[192.0.2.1]",
  "",
];

test.serial("each address that is not exactly one plain address is handler-failed: nothing queued, incident, slot open", async (t) => {
  const wf = await deploy();
  for (const address of REFUSED) {
    const run = await wf.start({ owner: { name: "Ann" } });
    const err = await t.throwsAsync(run.raise("notify", { address }, someone), { instanceOf: RefusalError }, JSON.stringify(address));
    t.is(err!.code, "handler-failed", JSON.stringify(address));
    await run.refresh();
    t.deepEqual(await run.outbox(), [], JSON.stringify(address));
    t.is(run.incidents.length, 1, JSON.stringify(address));
    t.regex(run.incidents[0].message, /not exactly one email address/);
    t.is(run.slots.find((s) => s.alias === "notify")?.status, "open");
    // The slot is still open: a valid address then goes through, to that one recipient.
    await run.raise("notify", { address: "victim@example.test" }, someone);
    t.deepEqual((await run.outbox()).map((m) => m.to), ["victim@example.test"]);
  }
});

test.serial("isEmailAddress() lets the workflow choose before sending", async (t) => {
  const wf = await deploy();
  const bad = await wf.start({ owner: { name: "Ann" } });
  await bad.raise("guarded", { address: "a@example.test, b@example.test" }, someone);
  t.is(bad.state, "Rejected");
  t.deepEqual(await bad.outbox(), []);
  const good = await wf.start({ owner: { name: "Ann" } });
  await good.raise("guarded", { address: "ann@example.test" }, someone);
  t.is(good.state, "Sent");
  t.deepEqual((await good.outbox()).map((m) => m.to), ["ann@example.test"]);
});

test("isEmailAddress accepts plain addresses, UTF-8 ones included, and nothing else", (t) => {
  for (const ok of ["a@b.test", "first.last+tag@sub.example.test", "ü@bü.test", "ops@localhost"]) t.true(isEmailAddress(ok), ok);
  for (const no of [...REFUSED, "a@", "@b.test", "a.@b.test", "a@b..test", "a@b.test\n", "a\u0000@b.test", "a(comment)@b.test"]) {
    t.false(isEmailAddress(no), JSON.stringify(no));
  }
});

test.serial("a queued message whose recipient breaks the rule fails at delivery at once", async (t) => {
  const wf = await deploy();
  const run = await wf.start({ owner: { name: "Ann" } });
  const config = loadConfig();
  const db = createDb(config.databaseUrl, 2);
  try {
    const id = randomUUID();
    // A row as an older version could have queued it.
    await db.outboxMessage.create({ data: { id, runId: run.id, to: "a@example.test, b@example.test", subject: "s", body: JSON.stringify("b"), status: "pending" } });
    const sent: Mail[] = [];
    const outcome = await deliverOutbox(db, new Sealer(config.sealKey), { send: async (m) => (sent.push(m), "id") }, { outboxId: id, runId: run.id });
    t.is(outcome, "failed");
    t.deepEqual(sent, []);
    const row = await db.outboxMessage.findUniqueOrThrow({ where: { runId_id: { runId: run.id, id } } });
    t.is(row.status, "failed");
    t.is(row.body, null);
  } finally {
    await db.$disconnect();
  }
});
