/**
 * Seeing it run (issue 9 §5): metrics a pager can use and logs that say what happened, read from a
 * real `slotflow serve` process (terminal mail: SMTP_URL unset).
 *
 * - `GET /metrics` counts deposits by every outcome (refused by the web process or by the worker),
 *   commands by result, apply latency, retried and failed command attempts, and reads queue depth,
 *   the oldest waiting job's age, the outbox and the last successful sweep from Redis and PostgreSQL.
 * - A refused command is logged as `command refused`, never `command applied`; a printed mail is
 *   logged as `email printed`, never `email delivered`. Each command's line carries the apply's
 *   `ms` and the job's `queuedMs` (docs/operations.md).
 */
import test from "ava";
import { Queue, type ConnectionOptions } from "bullmq";
import { Redis } from "ioredis";
import { randomUUID } from "node:crypto";
import { CommandSigner } from "../../src/queue/signature.js";
import { dropDatabase } from "../helpers/db.js";
import { deployFixture, postLink, startRun, uniqueTitle } from "../helpers/callback.js";
import { linkIn, waitForEmail } from "../helpers/mail.js";
import { eventually, freePort, request, startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;
const startedAt = Date.now() / 1000;

test.before(async () => {
  cluster = await startCluster("observe");
  await deployFixture(cluster.baseUrl, "callback-gates.flow");
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

/** The value of one sample of the Prometheus text exposition, or undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}

const scrape = async () => (await request(cluster.baseUrl, "GET", "/metrics")).text;
const logLines = () => cluster.output().flatMap((l) => (l.startsWith("{") ? [JSON.parse(l) as Record<string, unknown>] : []));

test.serial("deposits are counted by every outcome, commands by result, with apply latency; refusals are logged as refused", async (t) => {
  const title = uniqueTitle("metrics");
  await startRun(cluster.baseUrl, "CbGates", { job: { title, contact: `${title}@example.test` }, limit: 100 });
  const offer = linkIn(await waitForEmail(() => cluster.output(), `offer ${title}`));
  t.is((await postLink(offer, { amount: 101 })).status, 409); // Requires: refused by the worker
  t.is((await postLink(offer, { amount: 5 })).status, 200);
  t.is((await postLink(offer, { amount: 5 })).status, 410); // refused by the web process
  t.is((await postLink(offer.replace(/[^/]+$/, "A".repeat(43)), { amount: 5 })).status, 404);

  const text = await scrape();
  t.is(sample(text, "slotflow_callback_deposits_total", { outcome: "requires-failed" }), 1);
  t.is(sample(text, "slotflow_callback_deposits_total", { outcome: "completed" }), 1);
  t.is(sample(text, "slotflow_callback_deposits_total", { outcome: "link-burned" }), 1);
  t.is(sample(text, "slotflow_callback_deposits_total", { outcome: "link-not-found" }), 1);
  t.is(sample(text, "slotflow_commands_total", { command: "deposit", result: "refused" }), 1);
  t.is(sample(text, "slotflow_commands_total", { command: "deposit", result: "applied" }), 1);
  t.true((sample(text, "slotflow_commands_total", { command: "start", result: "applied" }) ?? 0) >= 1);
  t.is(sample(text, "slotflow_command_apply_duration_seconds_count", { command: "deposit" }), 2);
  t.false(text.includes(offer.split("/").pop()!), "no token in the metrics");

  const logs = logLines();
  t.true(logs.some((l) => l.msg === "command refused" && l.code === "requires-failed" && l.command === "deposit"));
  const applied = logs.filter((l) => l.msg === "command applied");
  t.true(applied.length >= 2);
  for (const l of applied) t.true(["started", "completed", "expired"].includes(String(l.status)), JSON.stringify(l));
  for (const l of [...applied, ...logs.filter((l) => l.msg === "command refused")]) {
    t.true(typeof l.ms === "number" && (l.ms as number) >= 0, JSON.stringify(l));
    t.true(Number.isInteger(l.queuedMs) && (l.queuedMs as number) >= 0, JSON.stringify(l));
  }
});

test.serial("a printed mail is logged as printed, never as delivered", async (t) => {
  await eventually(async () => logLines().some((l) => l.msg === "email printed (SMTP_URL is not set)"));
  t.false(logLines().some((l) => l.msg === "email delivered"));
});

test.serial("a command attempt that fails is counted as retried, and its last attempt as failed", async (t) => {
  const connection = new Redis(cluster.env.REDIS_URL!, { maxRetriesPerRequest: null });
  const queue = new Queue("commands", { connection: connection as ConnectionOptions, prefix: cluster.env.SLOTFLOW_QUEUE_PREFIX });
  try {
    // Job data a worker refuses to process (it validates every job): each attempt fails. Signed
    // like slotflow's own jobs, so it reaches validation (an unsigned job fails at once: issue 28).
    const commandId = randomUUID();
    const garbage = new CommandSigner([cluster.env.SLOTFLOW_SEAL_KEY!]).signed({ kind: "deposit", commandId, garbage: true });
    await queue.add("deposit", garbage, { jobId: commandId, attempts: 2, backoff: { type: "fixed", delay: 10 }, removeOnFail: true });
    const text = await eventually(async () => {
      const s = await scrape();
      return sample(s, "slotflow_commands_failed_total", { command: "deposit" }) === 1 ? s : null;
    }, 20_000);
    t.is(sample(text, "slotflow_commands_retried_total", { command: "deposit" }), 1);
    t.true(logLines().some((l) => l.msg === "command attempt failed; will retry"));
    t.true(logLines().some((l) => l.msg === "command failed"));
  } finally {
    await queue.close();
    connection.disconnect();
  }
});

test.serial("queue depth, the oldest waiting job's age, the outbox and the last successful sweep are read when scraped", async (t) => {
  const text = await eventually(async () => {
    const s = await scrape();
    return (sample(s, "slotflow_sweep_last_success_timestamp_seconds") ?? 0) >= startedAt ? s : null;
  }, 20_000);
  for (const queue of ["commands", "mail", "sweep"]) {
    for (const state of ["waiting", "active", "delayed", "failed"]) t.not(sample(text, "slotflow_queue_jobs", { queue, state }), undefined, `${queue} ${state}`);
  }
  t.true((sample(text, "slotflow_queue_oldest_waiting_job_age_seconds", { queue: "commands" }) ?? -1) >= 0);
  t.not(sample(text, "slotflow_outbox_messages", { status: "pending" }), undefined);
  t.is(sample(text, "slotflow_outbox_messages", { status: "failed" }), 0);
  t.true((sample(text, "slotflow_outbox_oldest_pending_age_seconds") ?? -1) >= 0);
});

test.serial("a worker process serves its own metrics on SLOTFLOW_METRICS_PORT", async (t) => {
  const port = await freePort();
  await cluster.spawn("worker", { env: { SLOTFLOW_METRICS_PORT: String(port) } });
  const res = await request(`http://127.0.0.1:${port}`, "GET", "/metrics");
  t.is(res.status, 200);
  t.regex(res.text, /^# HELP slotflow_commands_total /m);
  // The series read from Redis appear once the new process's connection is up.
  const text = await eventually(async () => {
    const s = (await request(`http://127.0.0.1:${port}`, "GET", "/metrics")).text;
    return sample(s, "slotflow_queue_jobs", { queue: "commands", state: "waiting" }) !== undefined ? s : null;
  }, 20_000);
  t.true((sample(text, "slotflow_queue_jobs", { queue: "commands", state: "waiting" }) ?? -1) >= 0);
});
