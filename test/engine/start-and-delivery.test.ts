/**
 * Issue 22 items 1–2 on real PostgreSQL and Redis:
 * - a start is one statement (sql/start-write.ts): a start that mints N links and queues M
 *   messages (with reply_to/cc) and deliveries writes them all or none; a repeated command id
 *   gets the recorded outcome and writes nothing, also when both arrive at once;
 * - the current-version cache (engine/versions/version-cache.ts): a deploy announced by one process is
 *   seen by another, which otherwise keeps its cached value;
 * - mail delivery is claim, send, mark (outbox/mailer.ts): two workers on one message send it
 *   once; a claim that lapsed is taken again; a message withdrawn during a failed send stays
 *   withdrawn.
 */
import { randomUUID } from "node:crypto";
import test from "ava";
import { Redis } from "ioredis";
import { createDb, type Db } from "../../src/db.js";
import { applyCommand, type EngineDeps } from "../../src/engine/commands/apply.js";
import { startRun } from "../../src/engine/commands/start.js";
import { deploy } from "../../src/engine/versions/deploy.js";
import { Sealer } from "../../src/engine/sealing/seal.js";
import { writeStart, type StartWrite } from "../../src/engine/sql/start-write.js";
import { CurrentVersions } from "../../src/engine/versions/version-cache.js";
import { loadVersion } from "../../src/engine/versions/workflows.js";
import { deliverOutbox, type Mail, type MailTransport } from "../../src/outbox/mailer.js";
import { withdrawPendingMessages } from "../../src/engine/sql/outbox-status.js";
import { dropDatabase, freshDatabase, sql } from "../helpers/db.js";
import { LIFECYCLES } from "../../src/engine/lifecycles/lifecycles.js";

const FLOW = `workflow Multi(owner: Owner)
entity Owner { name: string }
event Answer(ok: bool)
initial state Open {
  subscribe Answer(ok) as first
  subscribe Answer(ok) as second
  enter {
    send email to "ann@example.test" { subject: "First", body: "Answer: " + first.CallbackUrl() }
    send email to "bob@example.test" {
      subject: "Second"
      body: "Answer: " + second.CallbackUrl()
      replyTo: "reply@example.test"
      cc: "boss@example.test"
    }
  }
  on first(ok) -> Done
}
terminal state Done
`;

let url = "";
let db: Db;
let deps: EngineDeps;
const sealer = new Sealer("test-seal-key-issue-22");
const REDIS_URL = process.env.REDIS_URL || "redis://127.0.0.1:6379";

test.before(async () => {
  url = await freshDatabase("startdeliv");
  db = createDb(url, 6);
  deps = { db, sealer, baseUrl: "http://slotflow.test" };
  await deploy(db, FLOW);
});
test.after.always(async () => {
  await db?.$disconnect();
  if (url) await dropDatabase(url);
});

const startCmd = () => ({ kind: "start" as const, commandId: randomUUID(), runId: randomUUID(), workflow: "Multi", version: 1, input: { owner: { name: "Ann" } } });

async function counts(runId: string) {
  const [row] = await sql(
    url,
    `SELECT (SELECT count(*) FROM runs WHERE id = $1)::int AS runs, (SELECT count(*) FROM slots WHERE run_id = $1)::int AS slots,
            (SELECT count(*) FROM links WHERE run_id = $1 AND status = 'live')::int AS links, (SELECT count(*) FROM outbox WHERE run_id = $1)::int AS outbox,
            (SELECT count(*) FROM deliveries WHERE run_id = $1)::int AS deliveries, (SELECT count(*) FROM applied_commands WHERE run_id = $1)::int AS applied`,
    [runId],
  );
  return row;
}

/** The StartWrite document applyStart would send for `cmd`, captured before it reaches PostgreSQL. */
async function startDocument(cmd: ReturnType<typeof startCmd>): Promise<StartWrite> {
  await loadVersion(db, cmd.workflow, cmd.version); // cached: the capturing stand-in below has no other method
  let captured: StartWrite | null = null;
  const capture = { $queryRawUnsafe: async (_sql: string, json: string) => ((captured = JSON.parse(json)), [{ prior: null }]) };
  const result = await startRun({ tx: capture as never, sealer, baseUrl: deps.baseUrl, lifecycles: LIFECYCLES }, cmd);
  await result.step!.flushStart({ id: cmd.commandId, kind: cmd.kind, outcome: result.outcome });
  return captured!;
}

test.serial("a start that mints 2 links and queues 2 messages writes them in one statement, with reply_to and cc", async (t) => {
  const cmd = startCmd();
  const applied = await applyCommand(deps, cmd);
  t.like(applied.outcome, { ok: true, status: "started" });
  t.is(applied.queuedMail.length, 2);
  t.deepEqual(await counts(cmd.runId), { runs: 1, slots: 2, links: 2, outbox: 2, deliveries: 0, applied: 1 });
  const mail = await sql(url, `SELECT reply_to, cc FROM outbox WHERE run_id = $1 ORDER BY created_at`, [cmd.runId]);
  t.is(mail[0].reply_to, null);
  t.is(sealer.openText(mail[1].reply_to), "reply@example.test");
  t.is(sealer.openText(mail[1].cc), "boss@example.test");
  // the same command again: its recorded outcome, nothing written
  const again = await applyCommand(deps, cmd);
  t.deepEqual(again.outcome, applied.outcome);
  t.deepEqual(again.queuedMail, []);
  t.deepEqual(await counts(cmd.runId), { runs: 1, slots: 2, links: 2, outbox: 2, deliveries: 0, applied: 1 });
});

test.serial("a start's write is all or none: a failing last row (a delivery) leaves no run, slot, link, mail or outcome", async (t) => {
  const cmd = startCmd();
  const doc = await startDocument(cmd);
  const delivery = { id: randomUUID(), run_id: cmd.runId, endpoint: "hook", statement: "webhook", webhook_id: "msg_1", payload: "{}", link_sha256: [], created_at: doc.now };
  await t.throwsAsync(writeStart(db, { ...doc, deliveries: [delivery, delivery] }), { message: /duplicate key|deliveries_pkey/ });
  t.deepEqual(await counts(cmd.runId), { runs: 0, slots: 0, links: 0, outbox: 0, deliveries: 0, applied: 0 });
  t.is(await writeStart(db, { ...doc, deliveries: [delivery] }), null);
  t.deepEqual(await counts(cmd.runId), { runs: 1, slots: 2, links: 2, outbox: 2, deliveries: 1, applied: 1 });
});

test.serial("two applications of one start at once: one writes, the other gets its outcome", async (t) => {
  const cmd = startCmd();
  const doc = await startDocument(cmd);
  const [a, b] = await Promise.all([writeStart(db, doc), writeStart(db, doc)]);
  t.is([a, b].filter((x) => x === null).length, 1);
  t.like([a, b].find((x) => x !== null) as object, { ok: true, status: "started" });
  t.deepEqual(await counts(cmd.runId), { runs: 1, slots: 2, links: 2, outbox: 2, deliveries: 0, applied: 1 });
});

test.serial("the current version is cached per process; a deploy announced by one is seen by the other", async (t) => {
  const config = { redisUrl: REDIS_URL, queuePrefix: `sft-vc-${randomUUID().slice(0, 8)}` };
  const pubA = new Redis(REDIS_URL);
  const pubB = new Redis(REDIS_URL);
  const a = new CurrentVersions(config, pubA);
  const b = new CurrentVersions(config, pubB);
  t.teardown(async () => {
    await a.close();
    await b.close();
    pubA.disconnect();
    pubB.disconnect();
  });
  const name = `Cached${randomUUID().slice(0, 6)}`;
  await deploy(db, FLOW.replace("workflow Multi", `workflow ${name}`));
  b.subscribe();
  a.subscribe();
  for (let i = 0; i < 100 && !(a.live && b.live); i++) await new Promise((r) => setTimeout(r, 20));
  t.true(a.live && b.live);
  t.is(await b.get(db, name), 1);
  // a change nobody announced is not seen: the value is cached
  await sql(url, `UPDATE workflows SET current_version = 7 WHERE name = $1`, [name]);
  t.is(await b.get(db, name), 1);
  await sql(url, `UPDATE workflows SET current_version = 1 WHERE name = $1`, [name]);
  // a deploy in "process" A (its own connections) reaches B
  await deploy(db, FLOW.replace("workflow Multi", `workflow ${name}`).replace('"First"', '"First v2"'));
  await a.announce(name);
  let seen: number | null = null;
  for (let i = 0; i < 50; i++) {
    seen = await b.get(db, name);
    if (seen !== 1) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  t.is(seen, 2);
  t.is(await b.get(db, "NoSuchWorkflow"), null);
});

function slowTransport(sent: Mail[], opts: { ms: number; fail?: boolean }): MailTransport {
  return {
    kind: "smtp",
    async send(mail) {
      await new Promise((r) => setTimeout(r, opts.ms));
      if (opts.fail) throw new Error("421 try again later");
      sent.push(mail);
      return `<${randomUUID()}@test>`;
    },
  };
}

test.serial("two workers delivering one message send it once (claim, send, mark)", async (t) => {
  const cmd = startCmd();
  const { queuedMail } = await applyCommand(deps, cmd);
  const sent: Mail[] = [];
  const transport = slowTransport(sent, { ms: 100 });
  const results = await Promise.all([deliverOutbox(db, sealer, transport, queuedMail[0]), deliverOutbox(db, sealer, transport, queuedMail[0])]);
  t.deepEqual(results.sort(), ["sent", "skipped"]);
  t.is(sent.length, 1);
  const [row] = await sql(url, `SELECT status, attempts, claimed_until, body FROM outbox WHERE id = $1`, [queuedMail[0].outboxId]);
  t.like(row, { status: "sent", attempts: 1, claimed_until: null, body: null });
  t.is(await deliverOutbox(db, sealer, transport, queuedMail[0]), "skipped");
});

test.serial("a claimed message is skipped until its claim lapses, then delivered", async (t) => {
  const cmd = startCmd();
  const { queuedMail } = await applyCommand(deps, cmd);
  const sent: Mail[] = [];
  const transport = slowTransport(sent, { ms: 0 });
  await sql(url, `UPDATE outbox SET claimed_until = now() + interval '1 minute' WHERE id = $1`, [queuedMail[1].outboxId]);
  t.is(await deliverOutbox(db, sealer, transport, queuedMail[1]), "skipped");
  await sql(url, `UPDATE outbox SET claimed_until = now() - interval '1 second' WHERE id = $1`, [queuedMail[1].outboxId]);
  t.is(await deliverOutbox(db, sealer, transport, queuedMail[1]), "sent");
  t.like(sent[0], { to: "bob@example.test", replyTo: "reply@example.test", cc: "boss@example.test" });
});

test.serial("a failed send releases the claim and counts the attempt; withdrawn during the send, it stays withdrawn", async (t) => {
  const cmd = startCmd();
  const { queuedMail } = await applyCommand(deps, cmd);
  const sent: Mail[] = [];
  await t.throwsAsync(deliverOutbox(db, sealer, slowTransport(sent, { ms: 0, fail: true }), queuedMail[0]), { message: /421/ });
  const [row] = await sql(url, `SELECT status, attempts, claimed_until, last_error FROM outbox WHERE id = $1`, [queuedMail[0].outboxId]);
  t.like(row, { status: "pending", attempts: 1, claimed_until: null, last_error: "421 try again later" });
  // withdrawn while a failing attempt is under way: no retry sends it
  const attempt = deliverOutbox(db, sealer, slowTransport(sent, { ms: 150, fail: true }), queuedMail[0]);
  await new Promise((r) => setTimeout(r, 50));
  await db.$transaction((tx) => withdrawPendingMessages(tx, cmd.runId));
  await t.throwsAsync(attempt);
  const [after] = await sql(url, `SELECT status, attempts FROM outbox WHERE id = $1`, [queuedMail[0].outboxId]);
  t.like(after, { status: "withdrawn", attempts: 2 });
  t.is(await deliverOutbox(db, sealer, slowTransport(sent, { ms: 0 }), queuedMail[0]), "skipped");
  t.is(sent.length, 0);
});
