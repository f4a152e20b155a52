/**
 * A 202 that survives a Redis that keeps nothing (issue 34 item 3; src/engine/commands/pending.ts): a
 * command whose wait ran out is recorded in PostgreSQL before it is answered "accepted"; the sweeper
 * queues it again when its job is gone from Redis, and drops the record once it was applied or
 * judged; applying stays exactly once by command id.
 *
 * A web and a worker process of a test cluster set the scene (a deployed workflow, runs, links from
 * the printed mail). The commands under test go through an in-process runtime on a queue prefix of
 * its own, whose only worker is the one this file starts (test 1, after the job was removed), and
 * whose only sweeps are the ones it runs (`sweepOnce`, with "now" past the grace).
 */
import test from "ava";
import type { Worker } from "bullmq";
import { randomBytes } from "node:crypto";
import { loadConfig } from "../../src/config.js";
import type { Command } from "../../src/engine/commands/types.js";
import { PENDING_GRACE_MS, recordPending } from "../../src/engine/commands/pending.js";
import { prepareDeposit } from "../../src/engine/commands/redeem.js";
import type { MailPump } from "../../src/outbox/mail-pump.js";
import { UnrecordedError } from "../../src/queue/queues.js";
import { createRuntime, type Runtime } from "../../src/runtime.js";
import { mailPump, startCommandWorker } from "../../workers/commands.js";
import { sweepOnce } from "../../workers/sweeper.js";
import { deployFixture, eventsOn, showRun, startRun, uniqueTitle } from "../helpers/callback.js";
import { dropDatabase, sql } from "../helpers/db.js";
import { linkIn, tokenOf, waitForEmail } from "../helpers/mail.js";
import { eventually, startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;
let rt: Runtime;
let worker: Worker | undefined;
let pump: MailPump | undefined;

test.before(async () => {
  cluster = await startCluster("durable202", { roles: ["web", "worker"] });
  await deployFixture(cluster.baseUrl, "callback-basic.flow");
  rt = createRuntime({ config: loadConfig({ ...cluster.env, SLOTFLOW_QUEUE_PREFIX: `sft-d202-${randomBytes(4).toString("hex")}`, LOG_LEVEL: "silent" }) });
});

test.after.always(async () => {
  await worker?.close();
  // startCommandWorker hands BullMQ a connection of its own (workers/options.ts), which BullMQ does
  // not close: left open, it keeps this test process alive after its tests.
  (worker?.opts.connection as { disconnect?: () => void } | undefined)?.disconnect?.();
  await pump?.close();
  await rt?.close();
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl).catch(() => undefined);
});

/** A sweep that sees every record made so far (its "now" is past the grace). */
const sweep = () => sweepOnce(rt, new Date(Date.now() + PENDING_GRACE_MS + 1000), 1000);

/** A new run of CbBasic and its `answer` link. */
async function newRun(): Promise<{ runId: string; link: string; typed: string }> {
  const title = uniqueTitle("d202");
  const runId = await startRun(cluster.baseUrl, "CbBasic", { job: { title, contact: `${title}@example.test`, handled: 0 } });
  const link = linkIn(await waitForEmail(cluster.output, `answer ${title}`));
  const typed = linkIn(await waitForEmail(cluster.output, `typed ${title}`));
  return { runId, link, typed };
}

async function depositOf(link: string, note: string): Promise<Command> {
  const prepared = await prepareDeposit(rt.db, tokenOf(link), { ok: true, note }, null);
  if (!prepared.ok || !prepared.cmd) throw new Error(`deposit not prepared: ${JSON.stringify(prepared)}`);
  return prepared.cmd;
}

const recorded = (commandId: string) => sql<{ kind: string; data: unknown; text: string }>(cluster.databaseUrl, "SELECT kind, data, data::text AS text FROM pending_commands WHERE command_id = $1", [commandId]);
const jobState = (cmd: Command) => rt.queues.commandQueueOf(cmd.runId).getJobState(cmd.commandId);
const handled = async (runId: string) => (await showRun(cluster.baseUrl, runId)).entities.job!.handled as number;

test.serial("a 202 whose job vanished from Redis is queued again by the sweeper and applied exactly once", async (t) => {
  t.timeout(120_000);
  const { runId, link, typed } = await newRun();
  // The note carries another callback URL: the record holds it sealed, never the token in clear.
  const cmd = await depositOf(link, `see ${typed}`);
  t.is(await rt.queues.submit(cmd, 50), "accepted", "no worker serves this prefix yet: the wait runs out");
  const [row] = await recorded(cmd.commandId);
  t.is(row?.kind, "deposit", "recorded before the 202");
  t.false(row!.text.includes(tokenOf(typed)), row!.text);
  t.false(row!.text.includes(tokenOf(link)), row!.text);

  // Redis loses the job (as a restart without persistence does).
  await (await rt.queues.commandQueueOf(runId).getJob(cmd.commandId))!.remove();
  t.is(await jobState(cmd), "unknown");

  const swept = await sweep();
  t.is(swept.requeued, 1);
  t.is(await jobState(cmd), "waiting", "queued again with the same job id");
  t.is(await handled(runId), 0);

  pump = mailPump(rt);
  worker = startCommandWorker(rt, pump);
  await eventually(async () => (await handled(runId)) === 1, 30_000);
  // The next sweep finds it applied: the record goes, nothing is queued again.
  const after = await sweep();
  t.is(after.requeued, undefined);
  t.deepEqual(await recorded(cmd.commandId), []);
  const run = await showRun(cluster.baseUrl, runId);
  t.is(run.entities.job!.handled, 1);
  t.is(eventsOn(run, "answer").length, 1, "applied exactly once");
});

test.serial("a 200 records nothing; a recorded command that was applied is dropped, not applied again", async (t) => {
  t.timeout(60_000);
  t.truthy(worker, "test 1 started the worker");
  const { runId, link } = await newRun();
  const cmd = await depositOf(link, "once");
  const outcome = await rt.queues.submit(cmd, 20_000);
  t.like(outcome, { ok: true, status: "completed" });
  t.deepEqual(await recorded(cmd.commandId), [], "a 200 waited for the commit: nothing recorded");

  // A 202 whose worker finished right after the record, and whose job Redis then lost.
  await recordPending(rt.db, rt.sealer, cmd);
  await (await rt.queues.commandQueueOf(runId).getJob(cmd.commandId))!.remove();
  const swept = await sweep();
  t.is(swept.requeued, undefined);
  t.deepEqual(await recorded(cmd.commandId), [], "dropped: applied_commands has it");
  t.is(await jobState(cmd), "unknown", "not queued again");
  const run = await showRun(cluster.baseUrl, runId);
  t.is(run.entities.job!.handled, 1);
  t.is(eventsOn(run, "answer").length, 1);
});

test.serial("a 202 the worker refused loses its record at once and is never queued again", async (t) => {
  t.timeout(60_000);
  const { runId, link } = await newRun();
  const first = await depositOf(link, "first");
  const second = await depositOf(link, "second"); // prepared while the link was live
  t.like(await rt.queues.submit(first, 20_000), { ok: true });
  await recordPending(rt.db, rt.sealer, second);
  const outcome = await rt.queues.submit(second, 20_000);
  t.like(outcome, { ok: false, refusal: { code: "link-burned" } });
  await eventually(async () => (await recorded(second.commandId)).length === 0, 10_000);
  await (await rt.queues.commandQueueOf(runId).getJob(second.commandId))!.remove();
  const swept = await sweep();
  t.is(swept.requeued, undefined);
  t.is(await jobState(second), "unknown");
  const run = await showRun(cluster.baseUrl, runId);
  t.is(run.entities.job!.handled, 1);
  t.is(run.entities.job!.note, "first");
});

test.serial("a wait that ran out but could not be recorded is no 202: UnrecordedError (the web's 503)", async (t) => {
  t.timeout(60_000);
  const { runId, link } = await newRun();
  const cmd = await depositOf(link, "unrecorded");
  const record = rt.queues.beforeAccept;
  rt.queues.beforeAccept = async () => {
    throw new Error("PostgreSQL is gone");
  };
  try {
    await t.throwsAsync(rt.queues.submit(cmd, 1), { instanceOf: UnrecordedError });
  } finally {
    rt.queues.beforeAccept = record;
  }
  // The job was queued all the same: applied once, as the 503's "may have been applied" says.
  await eventually(async () => (await handled(runId)) === 1, 30_000);
  t.deepEqual(await recorded(cmd.commandId), []);
});
