/**
 * Graceful shutdown (issue 9 §4): SIGTERM to a web process and a worker process during a burst of
 * deposits. Two `web` and two `worker` processes share one database and queue prefix; the client
 * plays the load balancer — it sends to web A until A's `/readyz` says it is stopping (or A refuses
 * connections), then to web B.
 *
 * Asserted: no connection that was accepted is reset (every request gets an answer; the only
 * error allowed is a refused connection, which was never accepted and is sent again to B); every
 * 200/202 is applied exactly once (one event and one burned link per slot in the run's history);
 * both signalled processes exit with code 0 after saying they stopped.
 */
import test from "ava";
import { Redis } from "ioredis";
import { dropDatabase } from "../helpers/db.js";
import { deployFixture, eventsOn, portOf, rawRequest, showRun, startRun, uniqueTitle, type RawAnswer } from "../helpers/callback.js";
import { linkIn, waitForEmail } from "../helpers/mail.js";
import { ADMIN_TOKEN, eventually, freePort, request, startCluster, type Cluster, type ServerProcess } from "../helpers/server.js";

let cluster: Cluster;

let webA: ServerProcess;
let workerA: ServerProcess;
let portB = 0;

test.before(async () => {
  cluster = await startCluster("shutdown", { roles: [], env: { SLOTFLOW_SHUTDOWN_DRAIN_MS: "3000", SLOTFLOW_WORKER_CONCURRENCY: "4" } });
  webA = await cluster.spawn("web");
  portB = await freePort();
  await cluster.spawn("web", { port: portB });
  workerA = await cluster.spawn("worker");
  await cluster.spawn("worker");
  await deployFixture(cluster.baseUrl, "callback-basic.flow");
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

const RUNS = 12;

/** Resolves when `proc` exits; its exit code. */
const exited = (proc: ServerProcess) =>
  new Promise<number | null>((resolve) => {
    if (proc.child.exitCode !== null) return resolve(proc.child.exitCode);
    proc.child.once("exit", (code) => resolve(code));
  });

test.serial("SIGTERM to a web and a worker during a burst: no accepted connection is reset, every 200/202 is applied exactly once", async (t) => {
  const portA = portOf(cluster.baseUrl);
  let sawStopping = false;

  // Links to deposit: the answer and ping links of RUNS runs.
  const runs: { runId: string; answer: string; ping: string }[] = [];
  const titles = Array.from({ length: RUNS }, () => uniqueTitle("stop"));
  const started = [...titles];
  await Promise.all(
    Array.from({ length: 3 }, async () => {
      for (let title = started.shift(); title; title = started.shift()) {
        // 201, or 202 when the loaded machine's worker is slower than the web process waits
        const res = await request(cluster.baseUrl, "POST", "/api/workflows/CbBasic/runs", { token: ADMIN_TOKEN, json: { job: { title, contact: `${title}@example.test`, handled: 0 } } });
        if (res.status !== 201 && res.status !== 202) throw new Error(`start answered ${res.status}: ${res.text}`);
        const link = async (alias: string) => linkIn(await waitForEmail(() => cluster.output(), `${alias} ${title}`, 30_000));
        runs.push({ runId: res.body.id, answer: await link("answer"), ping: await link("ping") });
      }
    }),
  );
  const deposits = runs.flatMap((r) => [
    { runId: r.runId, alias: "answer", path: new URL(r.answer).pathname, body: JSON.stringify({ ok: true, note: "n" }) },
    { runId: r.runId, alias: "ping", path: new URL(r.ping).pathname, body: undefined },
  ]);

  // The load balancer's view of web A: in rotation until its readiness says otherwise.
  let aInRotation = true;
  const poll = setInterval(() => {
    rawRequest({ port: portA, method: "GET", path: "/readyz" }).then(
      (r) => {
        if (r.status !== 200) aInRotation = false;
        if (r.status === 503 && r.body?.status === "stopping") sawStopping = true;
      },
      () => {
        aInRotation = false;
      },
    );
  }, 50);

  const answers: { deposit: (typeof deposits)[number]; answer: RawAnswer; port: number }[] = [];
  const resets: string[] = [];
  let sent = 0;
  let signalled = false;
  const send = async (d: (typeof deposits)[number]) => {
    for (;;) {
      const port = aInRotation ? portA : portB;
      try {
        const headers: Record<string, string> = d.body === undefined ? {} : { "content-type": "application/json" };
        const answer = await rawRequest({ port, method: "POST", path: d.path, headers, body: d.body });
        answers.push({ deposit: d, answer, port });
        return;
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (code === "ECONNREFUSED" && port === portA) {
          aInRotation = false; // never accepted: nothing was sent, send it to B
          continue;
        }
        resets.push(`${port}: ${code ?? String(err)}`);
        return;
      }
    }
  };
  const queue = [...deposits];
  await Promise.all(
    Array.from({ length: 6 }, async () => {
      for (let d = queue.shift(); d; d = queue.shift()) {
        if (++sent === 8 && !signalled) {
          signalled = true;
          webA.child.kill("SIGTERM");
          workerA.child.kill("SIGTERM");
        }
        await send(d);
      }
    }),
  );
  clearInterval(poll);

  t.deepEqual(resets, [], "no accepted connection was reset");
  t.true(sawStopping, "web A's readiness said it was stopping before it stopped accepting");
  t.is(answers.length, deposits.length);
  for (const { deposit, answer } of answers) t.true(answer.status === 200 || answer.status === 202, `${deposit.alias}: ${answer.status} ${answer.text}`);
  t.true(answers.some((a) => a.port === portA), "web A answered some of the burst");
  t.true(answers.some((a) => a.port === portB), "web B took over");

  t.is(await exited(webA), 0);
  t.is(await exited(workerA), 0);
  t.true(webA.output.some((l) => l.includes('"msg":"stopped"')));
  t.true(workerA.output.some((l) => l.includes('"msg":"stopped"')));

  // Exactly once: one event and one burned link per deposited slot, once every 202 is applied.
  const bBase = `http://127.0.0.1:${portB}`;
  for (const r of runs) {
    const shown = await eventually(async () => {
      const v = await showRun(bBase, r.runId);
      return eventsOn(v, "answer").length >= 1 && eventsOn(v, "ping").length >= 1 ? v : null;
    }, 30_000);
    t.is(eventsOn(shown, "answer").length, 1, r.runId);
    t.is(eventsOn(shown, "ping").length, 1, r.runId);
    t.is(shown.history.filter((h) => h.kind === "link-burned").length, 2, r.runId);
    t.is(shown.entities.job.handled, 2, r.runId);
  }
});

test.serial("a request in flight at SIGTERM is answered even when it outlasts the old 5 s limit; its job is applied once a worker runs", async (t) => {
  // A web process of its own queue prefix, whose deposits no worker takes yet: a deposit waits
  // SLOTFLOW_DEPOSIT_WAIT_MS (8 s) before answering 202.
  const prefix = `${cluster.env.SLOTFLOW_QUEUE_PREFIX}-lonely`;
  const port = await freePort();
  const lonely = await cluster.spawn("web", { port, env: { SLOTFLOW_QUEUE_PREFIX: prefix, SLOTFLOW_DEPOSIT_WAIT_MS: "8000", SLOTFLOW_SHUTDOWN_DRAIN_MS: "0" } });
  const title = uniqueTitle("inflight");
  const base = `http://127.0.0.1:${portB}`;
  const runId = await startRun(base, "CbBasic", { job: { title, contact: `${title}@example.test`, handled: 0 } });
  const ping = new URL(linkIn(await waitForEmail(() => cluster.output(), `ping ${title}`, 30_000))).pathname;

  const inFlight = rawRequest({ port, method: "POST", path: ping });
  // In flight once its command is queued (the web process now waits for a worker).
  const redis = new Redis(cluster.env.REDIS_URL!);
  try {
    await eventually(async () => (await redis.llen(`${prefix}:commands:wait`)) > 0);
  } finally {
    redis.disconnect();
  }
  lonely.child.kill("SIGTERM");
  const answer = await inFlight;
  t.is(answer.status, 202, answer.text);
  t.is(await exited(lonely), 0);

  // The job was left in Redis: a worker of that prefix applies it, once.
  await cluster.spawn("worker", { env: { SLOTFLOW_QUEUE_PREFIX: prefix } });
  const shown = await eventually(async () => {
    const v = await showRun(base, runId);
    return eventsOn(v, "ping").length >= 1 ? v : null;
  }, 30_000);
  t.is(eventsOn(shown, "ping").length, 1);
  t.is(shown.entities.job.handled, 1);
});
