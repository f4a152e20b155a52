/**
 * A Redis that keeps nothing, restarted during a burst of deposits answered 202 (issue 34 item 3;
 * `npm run test:faults`). Its own redis-server on a free port, **without persistence**
 * (`appendonly no`, no RDB: a restart comes back empty, as the default Redis of many installs
 * does), its own database, and slotflow processes of its own: one web process that waits 1 ms for
 * the outcome (SLOTFLOW_DEPOSIT_WAIT_MS=1: nearly every deposit is a 202), one worker, a sweeper.
 *
 * The fault, a third of the way into the burst: the worker is paused (SIGSTOP) so that accepted
 * deposits pile up in Redis as jobs, then Redis is shut down (keeping nothing) and started again
 * empty, then the worker resumes. Every job queued before the restart is gone.
 *
 * Checks: every 202 is applied exactly once with its own body **without its client asking
 * again** (the 202 promised it: the record in PostgreSQL and the sweeper bring it back); the sweeper
 * did queue lost commands again (so the fault really took jobs); every 503 or lost answer, retried
 * with its Idempotency-Key, learns "completed", applied once; the queues drain; no process died.
 * Before issue 34 item 3 the 202s whose jobs were in Redis at the restart were never applied.
 */
import test from "ava";
import { randomBytes, randomUUID } from "node:crypto";
import { deployFixture } from "../helpers/callback.js";
import { dropDatabase, sql } from "../helpers/db.js";
import { pool, post, prepare, until, type Answer } from "../helpers/burst.js";
import { ADMIN_TOKEN, request, startCluster, type Cluster, type ServerProcess } from "../helpers/server.js";
import { startRedis, type RedisServer } from "../helpers/services.js";

const DEPOSITS = Number(process.env.SLOTFLOW_FAULTS_VOLATILE_DEPOSITS || 90);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
process.env.SLOTFLOW_TEST_READY_MS ||= "120000";


let redis: RedisServer | undefined;
let cluster: Cluster | undefined;
let worker: ServerProcess | undefined;

test.after.always(async () => {
  worker?.child.kill("SIGCONT");
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl).catch(() => undefined);
  await redis?.destroy();
});



type View = { entities: { job: { handled: number; note: string | null } }; history: { kind: string; data: { alias?: string } }[] };
const view = async (c: Cluster, runId: string) => (await request(c.baseUrl, "GET", `/api/runs/${runId}`, { token: ADMIN_TOKEN })).body as View;
const appliedOnce = (v: View | undefined, note: string) =>
  v?.entities.job.handled === 1 && v.entities.job.note === note && v.history.filter((h) => h.kind === "event" && h.data?.alias === "answer").length === 1;

test.serial("Redis without persistence restarted during a burst of 202s: every 202 is applied exactly once, without a retry", async (t) => {
  t.timeout(600_000);
  redis = await startRedis({ appendonly: false });
  const c = (cluster = await startCluster("rvolatile", {
    roles: [],
    env: { REDIS_URL: redis.url, SLOTFLOW_RATE_LIMIT_PER_MINUTE: "1000000", SLOTFLOW_DEPOSIT_WAIT_MS: "1", SLOTFLOW_WORKER_CONCURRENCY: "4" },
  }));
  await c.spawn("web");
  worker = await c.spawn("worker");
  await c.spawn("sweeper");
  await deployFixture(c.baseUrl, "faults.flow");

  const deposits = (await prepare({ cluster: c, bases: [c.baseUrl], killed: new Set() }, "volatile", DEPOSITS)).map((d, i) => ({ ...d, key: randomUUID(), body: { note: `v${i}-${randomBytes(2).toString("hex")}` }, first: undefined as Answer | undefined, final: undefined as Answer | undefined, retries: 0 }));
  const server = redis;
  const w = worker;
  let sent = 0;
  let faultDone: Promise<void> | null = null;
  const t0 = Date.now();
  await pool(deposits, 8, async (d) => {
    if (++sent === Math.ceil(DEPOSITS / 3)) {
      faultDone = (async () => {
        w.child.kill("SIGSTOP"); // the worker falls behind: accepted deposits wait in Redis
        await sleep(1500);
        await server.stop("shutdown"); // appendonly no, no RDB: nothing is kept
        await sleep(1000);
        await server.start();
        w.child.kill("SIGCONT");
      })();
    }
    d.first = await post(c.baseUrl, d.url, d.body, d.key);
    await sleep(20);
  });
  await faultDone;

  // The 202s: applied by themselves, nobody asks again.
  const accepted = deposits.filter((d) => d.first?.status === 202);
  t.true(accepted.length > DEPOSITS / 3, `${accepted.length} of ${DEPOSITS} first answers were 202`);
  await until("every 202 applied", 120_000, async () => (await pool(accepted, 8, async (d) => appliedOnce(await view(c, d.runId), d.body.note))).every(Boolean)).catch(() => undefined);
  const acceptedViews = await pool(accepted, 8, (d) => view(c, d.runId));
  t.deepEqual(
    accepted.flatMap((d, i) => (appliedOnce(acceptedViews[i], d.body.note) ? [] : [{ first: d.first, job: acceptedViews[i]?.entities.job }])),
    [],
    "every 202 applied exactly once, with its own body, without its client asking again",
  );
  const requeued = c.output().filter((l) => l.includes("queued again: commands answered 202 whose jobs were gone from Redis"));
  t.true(requeued.length > 0, "the restart took queued jobs, and the sweeper queued them again");

  // Every other answer (503, lost) is asked again with its key and body.
  await pool(deposits, 8, async (d) => {
    let a = d.first;
    const end = Date.now() + 120_000;
    while (a?.status !== 200 && a?.status !== 202 && Date.now() < end) {
      if (a && a.status !== 0 && a.status !== 503) break; // a refusal: kept as is
      await sleep(500);
      d.retries++;
      a = await post(c.baseUrl, d.url, d.body, d.key);
    }
    d.final = a;
  });
  const views = await pool(deposits, 8, (d) => view(c, d.runId));
  const count = (s: number) => deposits.filter((d) => d.first?.status === s).length;
  t.log(`deposits ${DEPOSITS} | 200 ${count(200)} | 202 ${count(202)} | 503 ${count(503)} | lost ${count(0)} | retried ${deposits.filter((d) => d.retries > 0).length} | sweeper re-queue lines ${requeued.length} | ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  t.deepEqual(deposits.filter((d) => d.first && d.first.status >= 500 && d.first.status !== 503).map((d) => d.first), [], "no 5xx but 503");
  t.deepEqual(
    deposits.flatMap((d, i) => (appliedOnce(views[i], d.body.note) ? [] : [{ first: d.first, final: d.final, job: views[i]?.entities.job }])),
    [],
    "every deposit applied exactly once, with its own body",
  );
  // Nothing left behind: the records of the 202s are dropped once applied.
  await until("every record dropped", 30_000, async () => (await sql<{ n: number }>(c.databaseUrl, "SELECT count(*)::int AS n FROM pending_commands"))[0]!.n === 0);
  const died = c.processes.filter((p) => p.child.exitCode !== null || p.child.signalCode !== null);
  t.deepEqual(died.map((p) => `${p.role} exited ${p.child.exitCode ?? p.child.signalCode}`), [], "no process died");
  t.deepEqual(c.output().filter((l) => /"level":60|uncaught exception/.test(l)), [], "no fatal log line");
});
