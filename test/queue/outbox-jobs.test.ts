/**
 * Mail and delivery jobs carry their row's run id (docs/scaling.md "Which statements are router"),
 * on real PostgreSQL and Redis with the real mail and delivery workers:
 * - every producer — the command worker's result (`queuedMail` / `queuedDeliveries`), the
 *   sweeper's re-enqueue and a delivery's retry — writes `{ outboxId, runId }` /
 *   `{ deliveryId, runId }`, so the claim names `(run_id, id)`: one shard under a distributed
 *   PostgreSQL;
 * - a job queued by the previous release (`{ outboxId }` / `{ deliveryId }`, no run id) is still
 *   delivered, through the claim by id alone, and a retry of it carries the run id;
 * - each row is sent exactly once whichever shape its job has;
 * - the claim filters on the run: a job whose run id is not its row's claims nothing.
 */
import { randomUUID } from "node:crypto";
import test from "ava";
import type { Worker } from "bullmq";
import { loadConfig } from "../../src/config.js";
import { setEndpoint } from "../../src/endpoints/endpoints.js";
import { applyCommand, type Applied } from "../../src/engine/commands/apply.js";
import { deploy } from "../../src/engine/versions/deploy.js";
import { prepareStart } from "../../src/engine/commands/prepare.js";
import { createLogger } from "../../src/log.js";
import { attemptDelivery } from "../../src/outbox/deliveries.js";
import { deliverOutbox, type Mail } from "../../src/outbox/mailer.js";
import { durableJobRetry } from "../../src/queue/retry.js";
import { createRuntime, type Runtime } from "../../src/runtime.js";
import { startDeliveryWorker } from "../../workers/deliveries.js";
import { startMailWorker } from "../../workers/mail.js";
import { sweepOnce } from "../../workers/sweeper.js";
import { dropDatabase, freshDatabase, sql } from "../helpers/db.js";
import { startReceiver, type Receiver } from "../helpers/receiver.js";

const FLOW = `workflow Notify(owner: Owner)
entity Owner { name: string @maxLength(40) }
event Answer(ok: bool)
initial state Waiting {
  subscribe Answer(ok) as answer
  enter {
    // one link for both: minting again would retire the first, and its mail would be withdrawn
    let link = answer.CallbackUrl()
    send email to "ann@example.test" { subject: "For " + owner.name, body: "Answer: " + link }
    send webhook to "hook" { type: "notify.created", name: owner.name, url: link }
  }
  on answer(ok) -> Done
}
terminal state Done
`;

let url = "";
let rt: Runtime;
let rx: Receiver;
const sent: Mail[] = [];
const workers: Worker[] = [];

test.before(async () => {
  url = await freshDatabase("outboxjobs");
  rx = await startReceiver();
  const config = loadConfig(
    {
      ...process.env,
      DATABASE_URL: url,
      SLOTFLOW_QUEUE_PREFIX: `${process.env.SLOTFLOW_QUEUE_PREFIX || "sft"}-oj-${randomUUID().slice(0, 8)}`,
      SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE: "1",
      // the first attempt at once, the next after 1.5 s: long enough to read the retry's job
      SLOTFLOW_DELIVERY_RETRY_MS: "0,1500,1500",
    },
    { secrets: ["SLOTFLOW_SEAL_KEY"] },
  );
  rt = createRuntime({ config, log: createLogger("silent"), transport: { kind: "smtp", send: async (m) => (sent.push(m), `<${randomUUID()}@test>`) } });
  await deploy(rt.db, FLOW);
  await setEndpoint(rt.db, rt.sealer, "hook", "webhook", new URL(`${rx.url}/hook`));
});

/** Closes workers, and the blocking connection each was given (workerOptions; a worker leaves a given connection open). */
async function closeWorkers(list: Worker[]): Promise<void> {
  await Promise.all(list.map((w) => w.close()));
  for (const w of list) (w.opts.connection as unknown as { disconnect(): void }).disconnect();
}

test.after.always(async () => {
  await closeWorkers(workers.splice(0));
  if (rt) {
    // this file's prefix is its own: leave nothing of it in Redis
    await Promise.all(rt.queues.all().map((q) => q.obliterate({ force: true }).catch(() => undefined)));
    await rt.close();
  }
  await rx?.close();
  if (url) await dropDatabase(url);
});

/** Starts a run of Notify for `name`; the step's result (its queued mail and deliveries). */
async function start(name: string): Promise<Applied & { runId: string }> {
  const prepared = await prepareStart(rt.db, "Notify", { owner: { name } });
  if (!prepared.ok) throw new Error(prepared.refusal.detail);
  const applied = await applyCommand(rt.engine, prepared.cmd);
  if (!applied.outcome.ok) throw new Error(applied.outcome.refusal.detail);
  return { ...applied, runId: prepared.cmd.runId };
}

async function until(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; ) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const runs: Record<string, Applied & { runId: string }> = {};

test.serial("the engine's result and the sweeper queue mail and delivery jobs with their run id", async (t) => {
  runs.fresh = await start("fresh");
  t.deepEqual(runs.fresh.queuedMail.map((m) => m.runId), [runs.fresh.runId]);
  t.deepEqual(runs.fresh.queuedDeliveries?.map((d) => d.runId), [runs.fresh.runId]);
  // as the command worker enqueues them after commit (workers/commands.ts)
  await rt.queues.enqueueMail(runs.fresh.queuedMail);
  await rt.queues.enqueueDeliveries((runs.fresh.queuedDeliveries ?? []).map((d) => ({ ...d, attempt: 0 })));
  const mail = runs.fresh.queuedMail[0]!;
  const delivery = runs.fresh.queuedDeliveries![0]!;
  t.deepEqual((await rt.queues.mail.getJob(mail.outboxId))?.data, { outboxId: mail.outboxId, runId: runs.fresh.runId });
  t.deepEqual((await rt.queues.deliveries.getJob(`${delivery.deliveryId}-a0`))?.data, { deliveryId: delivery.deliveryId, runId: runs.fresh.runId });

  // rows no job took: the sweeper re-enqueues them, with their run id
  runs.swept = await start("swept");
  const swept = await sweepOnce(rt, new Date(Date.now() + 60_000), 0);
  t.true(swept.mail >= 1 && (swept.deliveries ?? 0) >= 1);
  const sweptMail = runs.swept.queuedMail[0]!;
  const sweptDelivery = runs.swept.queuedDeliveries![0]!;
  t.deepEqual((await rt.queues.mail.getJob(sweptMail.outboxId))?.data, { outboxId: sweptMail.outboxId, runId: runs.swept.runId });
  t.deepEqual((await rt.queues.deliveries.getJob(`${sweptDelivery.deliveryId}-a0`))?.data, { deliveryId: sweptDelivery.deliveryId, runId: runs.swept.runId });
});

test.serial("jobs with a run id and jobs of the previous release (row id only) are each delivered exactly once", async (t) => {
  // the previous release's jobs: `{ outboxId }` and `{ deliveryId }`, with its job ids and options
  runs.old = await start("old");
  const oldMail = runs.old.queuedMail[0]!;
  const oldDelivery = runs.old.queuedDeliveries![0]!;
  const opts = { ...durableJobRetry, removeOnComplete: true, removeOnFail: { age: 24 * 3600 } };
  await rt.queues.mail.add("deliver", { outboxId: oldMail.outboxId }, { ...opts, jobId: oldMail.outboxId });
  await rt.queues.deliveries.add("attempt", { deliveryId: oldDelivery.deliveryId }, { ...opts, jobId: `${oldDelivery.deliveryId}-a0` });

  workers.push(startMailWorker(rt, 0), startDeliveryWorker(rt));
  const ids = [runs.fresh!.runId, runs.swept!.runId, runs.old.runId];
  await until("every message and delivery sent", async () => {
    const [row] = await sql<{ pending: number }>(
      url,
      `SELECT (SELECT count(*) FROM outbox WHERE run_id = ANY($1) AND status <> 'sent') + (SELECT count(*) FROM deliveries WHERE run_id = ANY($1) AND status <> 'sent') AS pending`,
      [ids],
    );
    return Number(row!.pending) === 0;
  });
  // a moment for any second delivery of the same row to show
  await new Promise((r) => setTimeout(r, 500));
  t.deepEqual(sent.map((m) => m.subject).sort(), ["For fresh", "For old", "For swept"]);
  const names = rx.at("/hook").map((r) => (JSON.parse(r.body) as { data: { name: string } }).data.name);
  t.deepEqual(names.sort(), ["fresh", "old", "swept"]);
  for (const row of await sql(url, `SELECT attempts FROM outbox WHERE run_id = ANY($1) UNION ALL SELECT attempts FROM deliveries WHERE run_id = ANY($1)`, [ids])) {
    t.is(row.attempts, 1);
  }
});

test.serial("a retry of a previous release's delivery job is queued with the run id", async (t) => {
  rx.reply("/flaky", (n) => ({ status: n === 1 ? 503 : 200 }));
  await setEndpoint(rt.db, rt.sealer, "hook", "webhook", new URL(`${rx.url}/flaky`));
  const run = await start("flaky");
  const delivery = run.queuedDeliveries![0]!;
  await rt.queues.deliveries.add("attempt", { deliveryId: delivery.deliveryId }, { jobId: `${delivery.deliveryId}-a0`, ...durableJobRetry, removeOnComplete: true });
  await until("the first attempt", async () => rx.at("/flaky").length === 1);
  await until("the retry's job", async () => (await rt.queues.deliveries.getJob(`${delivery.deliveryId}-a1`)) !== undefined);
  t.deepEqual((await rt.queues.deliveries.getJob(`${delivery.deliveryId}-a1`))?.data, { deliveryId: delivery.deliveryId, runId: run.runId });
  await until("the retry delivered", async () => (await sql(url, `SELECT status FROM deliveries WHERE id = $1`, [delivery.deliveryId]))[0]?.status === "sent");
  t.is(rx.at("/flaky").length, 2);
});

test.serial("the claim names the run: a job whose run id is not its row's claims nothing", async (t) => {
  await closeWorkers(workers.splice(0));
  await setEndpoint(rt.db, rt.sealer, "hook", "webhook", new URL(`${rx.url}/claim`));
  const run = await start("claim");
  const other = randomUUID();
  const mail = run.queuedMail[0]!;
  const delivery = run.queuedDeliveries![0]!;
  const deps = { db: rt.db, sealer: rt.sealer, allowPrivate: true, retryMs: [0] };
  const before = sent.length;
  t.is(await deliverOutbox(rt.db, rt.sealer, rt.transport, { outboxId: mail.outboxId, runId: other }), "skipped");
  t.deepEqual(await attemptDelivery(deps, { deliveryId: delivery.deliveryId, runId: other }), { kind: "skipped" });
  t.like((await sql(url, `SELECT status, attempts, claimed_until FROM outbox WHERE id = $1`, [mail.outboxId]))[0], { status: "pending", attempts: 0, claimed_until: null });
  t.like((await sql(url, `SELECT status, attempts FROM deliveries WHERE id = $1`, [delivery.deliveryId]))[0], { status: "pending", attempts: 0 });
  t.is(await deliverOutbox(rt.db, rt.sealer, rt.transport, mail), "sent");
  t.like(await attemptDelivery(deps, delivery), { kind: "sent" });
  t.is(sent.length, before + 1);
  t.is(rx.at("/claim").length, 1);
});
