/**
 * Durable outcomes (issue 8 items 8, 11, 12), over real processes, PostgreSQL and Redis:
 *
 * - 8: a deposit answered 202 while the worker's database is unreachable for longer than the old
 *   retry budget (8 attempts ≈ 32 s) is still applied, once, when the database is back; a command
 *   that fails deterministically ends its job and leaves a `command-failed` incident on the run,
 *   nothing applied.
 * - 11: the jobs held by a worker killed with SIGKILL are applied by another worker (BullMQ's
 *   defaults took 50–64 s; with slotflow's lock of 5 s and stalled check of 2.5 s — asserted as
 *   the workers' options — it is ~10–20 s here, logged, not asserted: issue 39 item 4).
 * - 12: a sweeper whose Redis lost its job scheduler (FLUSHDB on a redis-server of the test's own)
 *   resumes expiring slots; a failed sweep is logged and counted in /metrics.
 */
import test from "ava";
import { Queue, type ConnectionOptions } from "bullmq";
import { Redis } from "ioredis";
import pg from "pg";
import { loadConfig } from "../../src/config.js";
import { Queues } from "../../src/queue/queues.js";
import { workerOptions } from "../../workers/options.js";
import { deployFixture, postLink, showRun, eventsOn, startRun, uniqueTitle } from "../helpers/callback.js";
import { dropDatabase, sql } from "../helpers/db.js";
import { kill, TcpProxy } from "../helpers/faults.js";
import { linkIn, waitForEmail } from "../helpers/mail.js";
import { eventually, freePort, request, startCluster, type Cluster } from "../helpers/server.js";
import { startRedis, type RedisServer } from "../helpers/services.js";

const clusters: Cluster[] = [];
const redisServers: RedisServer[] = [];

test.after.always(async () => {
  for (const c of clusters) {
    await c.stop();
    await dropDatabase(c.databaseUrl).catch(() => undefined);
  }
  for (const r of redisServers) await r.destroy();
});

async function cluster(label: string, roles: ("web" | "worker" | "sweeper" | "serve")[], env: NodeJS.ProcessEnv = {}): Promise<Cluster> {
  const c = await startCluster(label, { roles, env });
  clusters.push(c);
  return c;
}

async function begin(c: Cluster, workflow: string, prefix: string, extra: Record<string, unknown> = {}) {
  const title = uniqueTitle(prefix);
  const runId = await startRun(c.baseUrl, workflow, { job: { title, contact: `${title}@example.test`, ...extra } });
  return { runId, title, link: async (alias: string) => linkIn(await waitForEmail(() => c.output(), `${alias} ${title}`)) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// --- item 8 --------------------------------------------------------------------------------------

test.serial("a deposit answered 202 while the worker's database is unreachable for 36 s is applied once when the database is back", async (t) => {
  t.timeout(150_000);
  const c = await cluster("dur8", ["web"]);
  const dbUrl = new URL(c.databaseUrl);
  const proxy = new TcpProxy(Number(dbUrl.port || 5432), dbUrl.hostname);
  const proxyPort = await proxy.start();
  const via = new URL(c.databaseUrl);
  via.port = String(proxyPort);
  const worker = await c.spawn("worker", { env: { DATABASE_URL: via.toString() } });
  await deployFixture(c.baseUrl, "callback-basic.flow");
  const run = await begin(c, "CbBasic", "outage", { handled: 0 });
  const url = await run.link("answer");

  await proxy.cut();
  const cutAt = Date.now();
  const answer = await postLink(url, { ok: true, note: "during the outage" }); // waits SLOTFLOW_DEPOSIT_WAIT_MS (10 s)
  t.is(answer.status, 202, answer.text);
  t.deepEqual(answer.body, { status: "accepted" });
  await sleep(36_000 - (Date.now() - cutAt)); // longer than the old budget: 8 attempts, 250 ms doubling ≈ 32 s
  await proxy.start(proxyPort);

  const shown = await eventually(async () => {
    const r = await showRun(c.baseUrl, run.runId);
    return eventsOn(r, "answer").length > 0 ? r : null;
  }, 30_000).catch(() => null);
  t.truthy(shown, `the deposit was applied after the outage; worker said:\n${worker.output.filter((l) => /"level":(50|60)/.test(l)).slice(-3).join("\n")}`);
  t.is(eventsOn(shown!, "answer").length, 1, "applied exactly once");
  t.is(shown!.entities.job.handled, 1);
  t.is(shown!.entities.job.note, "during the outage");
  t.true(worker.output.some((l) => l.includes('"msg":"command attempt failed; will retry"') && l.includes('"kind":"infrastructure"')), "the worker logged infrastructure retries");
  t.is(worker.child.exitCode, null, "the worker did not die");
  await kill(worker);
  await proxy.cut();
});

test.serial("a command that fails deterministically ends its job early and records a command-failed incident on the run; nothing is applied", async (t) => {
  t.timeout(90_000);
  const c = await cluster("dur8d", ["web", "worker"]);
  await deployFixture(c.baseUrl, "callback-basic.flow");
  const run = await begin(c, "CbBasic", "poison", { handled: 0 });
  await run.link("answer");
  // A run whose stored input cannot be opened: every command on it fails the same way.
  await sql(c.databaseUrl, `UPDATE runs SET input = '{"job": {"$sealed": "v9.a.b.c"}}'::jsonb WHERE id = $1`, [run.runId]);
  const [link] = await sql<{ id: string }>(c.databaseUrl, "SELECT id FROM links WHERE run_id = $1 AND status = 'live' ORDER BY created_at LIMIT 1", [run.runId]);
  const queues = new Queues({ redisUrl: c.env.REDIS_URL!, queuePrefix: c.env.SLOTFLOW_QUEUE_PREFIX!, depositWaitMs: 1000, sealKeys: [c.env.SLOTFLOW_SEAL_KEY!] });
  const commandId = crypto.randomUUID();
  try {
    await queues.enqueue({ kind: "deposit", commandId, runId: run.runId, linkId: link!.id, args: { ok: true, note: "poison" } });
    const state = await eventually(async () => {
      const job = await queues.commands.getJob(commandId);
      const s = await job?.getState();
      return s === "failed" ? { s, attempts: job!.attemptsMade } : null;
    }, 40_000);
    t.is(state.s, "failed");
    t.true(state.attempts < 8, `ended after ${state.attempts} attempts`);
  } finally {
    await queues.close();
  }
  const incidents = await sql<{ code: string; command: string; message: string }>(c.databaseUrl, "SELECT code, command, message FROM incidents WHERE run_id = $1", [run.runId]);
  t.is(incidents.length, 1, JSON.stringify(incidents));
  t.is(incidents[0]?.code, "command-failed");
  t.is(incidents[0]?.command, "deposit");
  const [after] = await sql<{ status: string }>(c.databaseUrl, "SELECT status FROM links WHERE id = $1", [link!.id]);
  t.is(after?.status, "live", "nothing applied: the link is still live");
  const [applied] = await sql<{ n: string }>(c.databaseUrl, "SELECT count(*) AS n FROM applied_commands WHERE id = $1", [commandId]);
  t.is(Number(applied?.n), 0);
});

// --- item 9 --------------------------------------------------------------------------------------

test.serial("a 503 says the request is not known to be applied, and a retry with the same Idempotency-Key learns the outcome", async (t) => {
  t.timeout(120_000);
  const c = await cluster("dur9", ["web", "worker"]);
  await deployFixture(c.baseUrl, "callback-basic.flow");
  // A web process whose Redis goes away after start-up (a process cannot start without it).
  const redisUrl = new URL(c.env.REDIS_URL!);
  const proxy = new TcpProxy(Number(redisUrl.port || 6379), redisUrl.hostname);
  const via = new URL(redisUrl.toString());
  via.hostname = "127.0.0.1";
  via.port = String(await proxy.start());
  const port = await freePort();
  const cutOff = await c.spawn("web", { port, env: { REDIS_URL: via.toString() } });
  const run = await begin(c, "CbBasic", "unknown", { handled: 0 });
  const url = await run.link("answer");
  const key = crypto.randomUUID();
  const body = { ok: true, note: "retried" };
  await proxy.cut();

  const first = await postLink(url, body, { origin: `http://127.0.0.1:${port}`, headers: { "idempotency-key": key } });
  t.is(first.status, 503, first.text);
  t.is(first.body?.code, "unavailable");
  t.regex(first.body?.detail ?? "", /not known to have been applied/);
  t.regex(first.body?.detail ?? "", /same Idempotency-Key/);
  t.false(/nothing was applied/.test(first.text), "a 503 does not claim that nothing was applied");

  const retry = await postLink(url, body, { headers: { "idempotency-key": key } });
  t.is(retry.status, 200, retry.text);
  const again = await postLink(url, body, { headers: { "idempotency-key": key } });
  t.deepEqual([again.status, again.body], [200, { status: "completed", receipt: retry.body.receipt }], "asking again learns the same outcome, and the same receipt");
  const shown = await showRun(c.baseUrl, run.runId);
  t.is(eventsOn(shown, "answer").length, 1);
  t.is(cutOff.child.exitCode, null);
});

// --- item 11 -------------------------------------------------------------------------------------

test.serial("the jobs held by a worker killed with SIGKILL are applied by another worker, no restart needed", async (t) => {
  t.timeout(180_000);
  const c = await cluster("dur11", ["web", "worker"]);
  await deployFixture(c.baseUrl, "callback-basic.flow");
  const runs = await Promise.all([1, 2, 3].map((i) => begin(c, "CbBasic", `held${i}`, { handled: 0 })));
  const urls = await Promise.all(runs.map((r) => r.link("answer")));
  const [victim] = c.processes.filter((p) => p.role === "worker");

  // Hold the three runs' row locks, so worker A takes the deposits and waits on them.
  const holder = new pg.Client({ connectionString: c.databaseUrl });
  await holder.connect();
  await holder.query("BEGIN");
  await holder.query("SELECT id FROM runs WHERE id = ANY($1::uuid[]) FOR UPDATE", [runs.map((r) => r.runId)]);
  const queueRedis = new Redis(c.env.REDIS_URL!, { maxRetriesPerRequest: null });
  const queue = new Queue("commands", { connection: queueRedis as ConnectionOptions, prefix: c.env.SLOTFLOW_QUEUE_PREFIX });
  try {
    const posted = Promise.all(urls.map((u, i) => postLink(u, { ok: true, note: `held-${i}` })));
    await eventually(async () => (await queue.getActiveCount()) === 3, 10_000);
    await c.spawn("worker");
    await kill(victim!);
    await holder.query("COMMIT");
    const killedAt = Date.now();
    const applied = await eventually(async () => {
      const shown = await Promise.all(runs.map((r) => showRun(c.baseUrl, r.runId)));
      return shown.every((s) => eventsOn(s, "answer").length === 1) ? shown : null;
    }, 120_000).catch(() => null);
    // How soon is logged, not asserted (issue 39 item 4): the lock duration makes it ~20 s here;
    // 120 s only bounds a hang.
    t.log(`all applied ${Math.round((Date.now() - killedAt) / 1000)} s after the kill`);
    t.truthy(applied, `not all applied ${Math.round((Date.now() - killedAt) / 1000)} s after the kill`);
    for (const a of await posted) t.true(a.status === 200 || a.status === 202, a.text);
    // What makes the take-back quick (not BullMQ's 30 s lock): the workers' lock and stalled check.
    const opts = workerOptions(loadConfig(c.env), 1, queueRedis);
    t.deepEqual([opts.lockDuration, opts.stalledInterval], [5000, 2500]);
    for (const [i, s] of (applied ?? []).entries()) {
      t.is(s.entities.job.handled, 1);
      t.is(s.entities.job.note, `held-${i}`);
    }
  } finally {
    await holder.end().catch(() => undefined);
    await queue.close();
    queueRedis.disconnect();
  }
});

// --- item 12 -------------------------------------------------------------------------------------

test.serial("a sweeper whose Redis lost its job scheduler (FLUSHDB) resumes expiring slots", async (t) => {
  t.timeout(120_000);
  const redis = await startRedis({ appendonly: false });
  redisServers.push(redis);
  const c = await cluster("dur12", ["web", "worker", "sweeper"], { REDIS_URL: redis.url, SLOTFLOW_SWEEP_INTERVAL_MS: "200" });
  await deployFixture(c.baseUrl, "callback-deadline.flow");
  const expired = async (runId: string) =>
    eventually(async () => {
      const r = await showRun(c.baseUrl, runId);
      return r.entities.job.quickExpired === true ? r : null;
    }, 20_000).then(() => true, () => false);

  const first = await begin(c, "CbDeadline", "sweep1");
  t.true(await expired(first.runId), "the sweeper expires slots before the flush");

  t.is(await redis.command("FLUSHDB"), "OK");
  const second = await begin(c, "CbDeadline", "sweep2");
  t.true(await expired(second.runId), "the sweeper expires slots after its scheduler was flushed");
  const sweeper = c.processes.find((p) => p.role === "sweeper")!;
  t.true(sweeper.output.some((l) => l.includes("sweep scheduler was missing from Redis; re-created it")));
});

test.serial("a failed sweep is logged and counted in slotflow_sweep_failures_total", async (t) => {
  t.timeout(90_000);
  const c = await cluster("dur12f", ["web"]);
  const dbUrl = new URL(c.databaseUrl);
  const proxy = new TcpProxy(Number(dbUrl.port || 5432), dbUrl.hostname);
  const via = new URL(c.databaseUrl);
  via.port = String(await proxy.start());
  const port = await freePort();
  const serve = await c.spawn("serve", { port, env: { DATABASE_URL: via.toString(), SLOTFLOW_SWEEP_INTERVAL_MS: "200" } });
  await proxy.cut();
  const logged = await eventually(async () => serve.output.some((l) => l.includes('"msg":"sweep failed"')), 20_000).catch(() => false);
  t.true(logged, "a failed sweep writes an error line");
  const metrics = await request(`http://127.0.0.1:${port}`, "GET", "/metrics");
  const line = metrics.text.split("\n").find((l) => l.startsWith('slotflow_sweep_failures_total{stage="sweep"}'));
  t.truthy(line, "the counter is exported");
  t.true(Number(line?.split(" ").pop()) >= 1, line);
  t.is(serve.child.exitCode, null, "the process keeps running");
});
