/**
 * The mail pump (src/outbox/mail-pump.ts, issue 22 item 2 "or batch"), on real PostgreSQL:
 * - the mail of many concurrently committed steps goes out in batches: one claim and one mark per
 *   batch, each message sent once, marked sent with its Message-ID;
 * - a pump and a `mail` job (or two pumps) on the same message send it once;
 * - a failed first attempt is recorded on the row and handed to the `mail` queue with the capped
 *   backoff's delay; an undeliverable recipient fails at once; a withdrawn message is not sent;
 * - a database that refuses the claim hands the batch to the queue; over its backlog the pump
 *   queues jobs instead; after close it queues jobs.
 */
import { randomUUID } from "node:crypto";
import test from "ava";
import { createDb, type Db } from "../../src/db.js";
import { applyCommand, type EngineDeps } from "../../src/engine/commands/apply.js";
import { deploy } from "../../src/engine/versions/deploy.js";
import { Sealer } from "../../src/engine/sealing/seal.js";
import { deliverOutbox, type Mail, type MailTransport } from "../../src/outbox/mailer.js";
import { BATCH, MAX_BACKLOG, MailPump, type EnqueueMail } from "../../src/outbox/mail-pump.js";
import { withdrawPendingMessages } from "../../src/engine/sql/outbox-status.js";
import type { MailJob } from "../../src/queue/outbox-jobs.js";
import { RETRY_BASE_DELAY_MS } from "../../src/queue/retry.js";
import { dropDatabase, freshDatabase, sql } from "../helpers/db.js";

const FLOW = `workflow Pumped(owner: Owner)
entity Owner { name: string; email: string }
event Answer(ok: bool)
initial state Open {
  subscribe Answer(ok) as decision
  enter {
    send email to owner.email { subject: "Answer please", body: "Answer: " + decision.CallbackUrl() }
  }
  on decision(ok) -> Done
}
terminal state Done
`;

let url = "";
let db: Db;
let deps: EngineDeps;
const sealer = new Sealer("test-seal-key-mail-pump");

test.before(async () => {
  url = await freshDatabase("mailpump");
  db = createDb(url, 8);
  deps = { db, sealer, baseUrl: "http://slotflow.test" };
  await deploy(db, FLOW);
});
test.after.always(async () => {
  await db?.$disconnect();
  if (url) await dropDatabase(url);
});

/** Starts a run whose step queues one mail to `email`; returns the run id and the outbox ids. */
async function started(email = "ann@example.test"): Promise<{ runId: string; mail: MailJob[]; ids: string[] }> {
  const runId = randomUUID();
  const { queuedMail } = await applyCommand(deps, { kind: "start", commandId: randomUUID(), runId, workflow: "Pumped", version: 1, input: { owner: { name: "Ann", email } } });
  return { runId, mail: queuedMail, ids: queuedMail.map((m) => m.outboxId) };
}

function transport(sent: Mail[], opts: { ms?: number; fail?: boolean } = {}): MailTransport {
  return {
    kind: "smtp",
    async send(mail) {
      await new Promise((r) => setTimeout(r, opts.ms ?? 0));
      if (opts.fail) throw new Error("421 try again later");
      sent.push(mail);
      return `<${randomUUID()}@test>`;
    },
  };
}

/** Counts the statements a client sends, by their first words. */
function counted(client: Db): { db: Db; statements: string[] } {
  const statements: string[] = [];
  const wrap = (name: "$queryRawUnsafe" | "$executeRawUnsafe" | "$executeRaw") =>
    (...args: unknown[]) => {
      statements.push(typeof args[0] === "string" ? args[0].trim().slice(0, 30) : String((args[0] as { raw?: string[] }).raw?.[0] ?? "").trim().slice(0, 30));
      return (client[name] as (...a: unknown[]) => Promise<unknown>)(...args);
    };
  return { db: { ...client, $queryRawUnsafe: wrap("$queryRawUnsafe"), $executeRawUnsafe: wrap("$executeRawUnsafe"), $executeRaw: wrap("$executeRaw") } as unknown as Db, statements };
}

const noQueue: EnqueueMail = async (items) => {
  throw new Error(`unexpected enqueue of ${items.length}`);
};

async function rows(ids: string[]) {
  return sql(url, `SELECT id, status, attempts, claimed_until, body, message_id, last_error FROM outbox WHERE id = ANY($1::uuid[]) ORDER BY created_at`, [ids]);
}

test.serial("the mail of many committed steps goes out in batches: one claim and one mark per batch, each message once", async (t) => {
  const runs = await Promise.all(Array.from({ length: 120 }, (_, i) => started(`r${i}@example.test`)));
  const sent: Mail[] = [];
  const { db: countingDb, statements } = counted(db);
  const pump = new MailPump({ db: countingDb, sealer, transport: transport(sent), enqueue: noQueue });
  for (const r of runs) await pump.deliver(r.mail);
  await pump.close();
  t.is(sent.length, 120);
  t.is(new Set(sent.map((m) => m.to)).size, 120, "each message once");
  const claims = statements.filter((s) => s.startsWith("UPDATE outbox o SET claimed")).length;
  const marks = statements.filter((s) => s.startsWith("UPDATE outbox o SET status")).length;
  t.is(claims, Math.ceil(120 / BATCH), `at most ${BATCH} messages per claim`);
  t.is(marks, claims, "one mark per batch");
  t.is(statements.length, claims + marks, "nothing else");
  const after = await rows(runs.flatMap((r) => r.ids));
  t.true(after.every((r) => r.status === "sent" && r.attempts === 1 && r.claimed_until === null && r.body === null && /^<.+@test>$/.test(r.message_id)));
  t.true(sent.every((m) => m.body.startsWith("Answer: http://slotflow.test/api/workflow/callback/")), "the body is opened (it was stored sealed)");
});

test.serial("a pump and a mail job on the same message send it once; so do two pumps", async (t) => {
  const sent: Mail[] = [];
  const a = await started();
  const pump = new MailPump({ db, sealer, transport: transport(sent, { ms: 80 }), enqueue: noQueue });
  await pump.deliver(a.mail);
  const job = deliverOutbox(db, sealer, transport(sent, { ms: 80 }), a.mail[0]!);
  await pump.close();
  await job;
  t.is(sent.length, 1, "the pump or the job, not both");
  const b = await started();
  const [p1, p2] = [0, 1].map(() => new MailPump({ db, sealer, transport: transport(sent, { ms: 50 }), enqueue: noQueue }));
  await Promise.all([p1!.deliver(b.mail), p2!.deliver(b.mail)]);
  await Promise.all([p1!.close(), p2!.close()]);
  t.is(sent.length, 2, "one send per message");
  t.is(await deliverOutbox(db, sealer, transport(sent), a.mail[0]!), "skipped", "a later job finds nothing to send");
  t.true((await rows([...a.ids, ...b.ids])).every((r) => r.status === "sent" && r.attempts === 1));
});

test.serial("a failed first attempt is recorded and handed to the mail queue with the backoff's first delay", async (t) => {
  const a = await started();
  const handed: { items: MailJob[]; delayMs?: number }[] = [];
  const pump = new MailPump({ db, sealer, transport: transport([], { fail: true }), enqueue: async (items, delayMs) => void handed.push({ items, delayMs }) });
  await pump.deliver(a.mail);
  await pump.close();
  const [row] = await rows(a.ids);
  t.like(row, { status: "pending", attempts: 1, claimed_until: null, last_error: "421 try again later" });
  t.is(handed.length, 1);
  t.deepEqual(handed[0]!.items, a.mail, "with its run id");
  t.true(handed[0]!.delayMs! >= RETRY_BASE_DELAY_MS * 0.5 && handed[0]!.delayMs! <= RETRY_BASE_DELAY_MS * 1.5, `delay ${handed[0]!.delayMs} ms`);
  // the retry is the job's (mailer.ts): the pump takes first attempts only
  const sent: Mail[] = [];
  const again = new MailPump({ db, sealer, transport: transport(sent), enqueue: noQueue });
  await again.deliver(a.mail);
  await again.close();
  t.is(sent.length, 0);
  t.is(await deliverOutbox(db, sealer, transport(sent), a.mail[0]!), "sent");
});

test.serial("an undeliverable recipient fails at once; a withdrawn message is not sent", async (t) => {
  const bad = await started("ann@example.test");
  await sql(url, `UPDATE outbox SET "to" = 'a@example.test, b@example.test' WHERE id = $1`, [bad.ids[0]]);
  const gone = await started();
  await db.$transaction((tx) => withdrawPendingMessages(tx, gone.runId));
  const sent: Mail[] = [];
  const pump = new MailPump({ db, sealer, transport: transport(sent), enqueue: noQueue });
  await pump.deliver(bad.mail);
  await pump.deliver(gone.mail);
  await pump.close();
  t.is(sent.length, 0);
  const [b] = await rows(bad.ids);
  t.like(b, { status: "failed", attempts: 1, body: null, last_error: "the recipient is not exactly one email address" });
  const [g] = await rows(gone.ids);
  t.is(g.status, "withdrawn");
});

test.serial("a database that refuses the claim, a full backlog and a closed pump hand the mail to the queue", async (t) => {
  const handed: MailJob[] = [];
  const enqueue: EnqueueMail = async (items) => void handed.push(...items);
  const down = createDb("postgresql://postgres@127.0.0.1:1/none", 1);
  const a = await started();
  const refused = new MailPump({ db: down, sealer, transport: transport([]), enqueue });
  await refused.deliver(a.mail);
  await refused.close();
  await down.$disconnect();
  t.deepEqual(handed, a.mail, "handed over, not lost");
  t.like((await rows(a.ids))[0], { status: "pending", attempts: 0, claimed_until: null });

  handed.length = 0;
  const sent: Mail[] = [];
  const slow = new MailPump({ db, sealer, transport: transport(sent, { ms: 20 }), enqueue });
  const runId = randomUUID();
  const over = await started();
  // in the same turn of the event loop, before the drain starts: the backlog is full
  void slow.deliver(Array.from({ length: MAX_BACKLOG }, () => ({ outboxId: randomUUID(), runId }))); // no such rows: the claims find nothing
  await slow.deliver(over.mail);
  t.deepEqual(handed, over.mail, "over the backlog: queued as a job");
  await slow.close();
  const late = await started();
  await slow.deliver(late.mail);
  t.deepEqual(handed, [...over.mail, ...late.mail], "after close: queued as a job");
  t.is(sent.length, 0);
});
