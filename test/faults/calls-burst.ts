/**
 * A burst of `call http` under faults (issue 40 item 6; `npm run test:faults`): its own
 * redis-server with AOF on a free port (never the machine's), its own database, and slotflow
 * processes of its own — one web process, two workers, a sweeper, with
 * SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE=1 so the `http` endpoint may be a local callee.
 *
 * The callee (node:http on loopback) verifies each request's Standard Webhooks signature, records
 * its `Idempotency-Key` under the run's `tag` (the call's Input), and answers after a random
 * 50–400 ms with a score fixed by the tag; for one tag in eight its first request gets a 503, so
 * retries happen outside the faults too.
 *
 * SLOTFLOW_FAULTS_CALL_RUNS runs (default 100) of a workflow whose first state holds
 * `call http "svc" as credit returns Scored { … Attempts: 5 }` are started; a third of the way in,
 * once the callee holds more requests than one worker may send to an endpoint at once (4, so both
 * workers hold some; asserted), a worker is killed with `kill -9` (mid-attempt) and a new one
 * started; two thirds of the way in, Redis is restarted (SHUTDOWN, AOF kept, start).
 *
 * Checks, after a bounded wait: every run finished, in the state its callee's answer routes to;
 * per run one call row `answered`, one `call-answered` and one `event` history entry (the answer
 * applied exactly once, the route taken once); every request the callee saw for a run carried the
 * same `Idempotency-Key` (the call id), keys distinct across runs, every signature valid; no
 * process died that was not killed; no fatal log line.
 */
import test from "ava";
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Webhook } from "standardwebhooks";
import { pool, until } from "../helpers/burst.js";
import { dropDatabase, sql } from "../helpers/db.js";
import { kill } from "../helpers/faults.js";
import { ADMIN_TOKEN, request, startCluster, type Cluster, type ServerProcess } from "../helpers/server.js";
import { startRedis, type RedisServer } from "../helpers/services.js";

const RUNS = Number(process.env.SLOTFLOW_FAULTS_CALL_RUNS || 100);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
process.env.SLOTFLOW_TEST_READY_MS ||= "120000";

const SOURCE = `workflow CallBurst(tag: string)
event Scored(score: int, band: string)
initial state Checking {
  call http "svc" as credit returns Scored {
    Method: POST
    Path: "/score"
    Input { tag: tag }
    Timeout: 5s
    Attempts: 5
  }
  on credit(score, band) {
    when (score >= 500) -> High
    default -> Low
  }
  on credit.failed -> Failed
}
terminal state High
terminal state Low
terminal state Failed
`;

/** The score the callee gives a tag (fixed, so the route a run must take is known). */
const scoreOf = (tag: string) => createHash("sha256").update(tag).digest()[0]! * 4;
const flaky = (tag: string) => createHash("sha256").update(tag).digest()[1]! % 8 === 0;

interface Seen {
  key: string;
  verified: boolean;
  status: number;
}

let redis: RedisServer | undefined;
let cluster: Cluster | undefined;
let secret = "";
const seen = new Map<string, Seen[]>();
let inFlight = 0;
const sockets = new Set<Socket>();
const callee = createServer((req: IncomingMessage, res: ServerResponse) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    let verified = false;
    try {
      new Webhook(secret).verify(body, req.headers as Record<string, string>);
      verified = true;
    } catch {
      verified = false;
    }
    let tag = "?";
    try {
      tag = String((JSON.parse(body) as { tag?: unknown }).tag);
    } catch {
      tag = "?";
    }
    const list = seen.get(tag) ?? [];
    seen.set(tag, list);
    const status = flaky(tag) && list.length === 0 ? 503 : 200;
    list.push({ key: String(req.headers["idempotency-key"] ?? ""), verified, status });
    inFlight++;
    setTimeout(() => {
      inFlight--;
      const text = status === 200 ? JSON.stringify({ score: scoreOf(tag), band: "B" }) : JSON.stringify({ busy: true });
      if (!res.destroyed) res.writeHead(status, { "content-type": "application/json" }).end(text);
    }, 50 + Math.floor(Math.random() * 350));
  });
});
callee.on("connection", (s) => {
  sockets.add(s);
  s.on("close", () => sockets.delete(s));
});

test.after.always(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => callee.close(() => r()));
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl).catch(() => undefined);
  await redis?.destroy();
});

type View = {
  status: string;
  state: string;
  slots: { alias: string; status: string; callId?: string }[];
  history: { kind: string; data: { alias?: string } }[];
};

test.serial("kill -9 a worker and restart Redis during a burst of calls: every answer applied once, every repeat with its key", async (t) => {
  t.timeout(600_000);
  await new Promise<void>((r) => callee.listen(0, "127.0.0.1", () => r()));
  redis = await startRedis({ appendonly: true });
  const c = (cluster = await startCluster("callsburst", {
    roles: [],
    env: { REDIS_URL: redis.url, SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE: "1", SLOTFLOW_RATE_LIMIT_PER_MINUTE: "1000000", SLOTFLOW_WORKER_CONCURRENCY: "8", SLOTFLOW_CALL_ENDPOINT_CONCURRENCY: "4" },
  }));
  await c.spawn("web");
  for (const role of ["worker", "worker", "sweeper"] as const) await c.spawn(role);
  const api = (method: string, path: string, json?: unknown) => request(c.baseUrl, method, path, { token: ADMIN_TOKEN, json });
  const put = await api("PUT", "/api/endpoints/svc", { kind: "http", url: `http://127.0.0.1:${(callee.address() as AddressInfo).port}/v1` });
  if (put.status !== 201) throw new Error(put.text);
  secret = put.body.secret;
  const deployed = await request(c.baseUrl, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: SOURCE });
  if (deployed.status !== 201) throw new Error(deployed.text);

  // A killed process is replaced as a supervisor would (systemd, Kubernetes): started again until
  // it stays up. A replacement that starts while Redis is being restarted refuses to start
  // ("cannot reach Redis", exit 1, as designed) — the supervisor tries again a second later.
  const replace = async (role: "worker") => {
    for (let tries = 1; ; tries++) {
      try {
        return await c.spawn(role);
      } catch (err) {
        if (tries >= 60 || !/exited with \d+ before it was ready/.test(String(err))) throw err;
        await sleep(1000);
      }
    }
  };
  const killed = new Set<ServerProcess>();
  const prefix = randomBytes(3).toString("hex");
  let sent = 0;
  let activeAtKill = -1;
  let faults: Promise<void>[] = [];
  const t0 = Date.now();
  // Each start attempt has its own tag: a start answered 503 (Redis down) may still have made a
  // run, which is not the one whose id we hold; the callee's checks cover its tag too.
  const started = await pool(Array.from({ length: RUNS }, (_, i) => i), 8, async (i) => {
    const n = ++sent;
    if (n === Math.ceil(RUNS / 3)) {
      faults.push(
        (async () => {
          const end = Date.now() + 20_000;
          // more requests in flight than one worker may hold (SLOTFLOW_CALL_ENDPOINT_CONCURRENCY 4):
          // both workers hold some, so the kill certainly hits attempts under way
          while (inFlight <= 4 && Date.now() < end) await sleep(2);
          activeAtKill = inFlight;
          const w = c.processes.find((x) => x.role === "worker" && !killed.has(x))!;
          killed.add(w);
          await kill(w);
          await replace("worker");
        })(),
      );
    }
    if (n === Math.ceil((2 * RUNS) / 3)) {
      faults.push(
        (async () => {
          await redis!.stop("shutdown");
          await sleep(1000);
          await redis!.start();
        })(),
      );
    }
    for (let attempt = 0; ; attempt++) {
      const tag = `${prefix}-${i}-a${attempt}`;
      const res = await api("POST", "/api/workflows/CallBurst/runs", { tag }).catch(() => null);
      if (res && (res.status === 201 || res.status === 202)) return { runId: res.body.id as string, tag };
      if (res && res.status !== 503) throw new Error(`start answered ${res.status}: ${res.text}`);
      await sleep(500);
    }
  });
  await Promise.all(faults);
  faults = [];

  // Bounded wait: a call whose attempt died with the worker is made again once its claim
  // (Timeout 5 s + 30 s) runs out.
  const views = new Map<string, View>();
  await until("every run finished", 240_000, async () => {
    await pool(started.filter((s) => views.get(s.runId)?.status !== "finished"), 8, async (s) => {
      const r = await api("GET", `/api/runs/${s.runId}`);
      if (r.status === 200) views.set(s.runId, r.body as View);
    });
    return started.every((s) => views.get(s.runId)?.status === "finished");
  }, 1000).catch(() => undefined);
  const seconds = ((Date.now() - t0) / 1000).toFixed(1);

  const problems: string[] = [];
  for (const { runId, tag } of started) {
    const v = views.get(runId);
    const say = (what: string) => problems.push(`${tag} (${runId}): ${what}`);
    if (!v || v.status !== "finished") {
      say(`not finished: ${v?.status} in ${v?.state}; callee saw ${seen.get(tag)?.length ?? 0} requests`);
      continue;
    }
    const want = scoreOf(tag) >= 500 ? "High" : "Low";
    if (v.state !== want) say(`ended in ${v.state}, not ${want}`);
    const answered = v.history.filter((h) => h.kind === "call-answered").length;
    const events = v.history.filter((h) => h.kind === "event").length;
    if (answered !== 1 || events !== 1) say(`${answered} call-answered, ${events} event entries`);
    const slot = v.slots.find((s) => s.alias === "credit");
    const keys = new Set((seen.get(tag) ?? []).map((s) => s.key));
    if (keys.size !== 1 || !slot?.callId || !keys.has(slot.callId)) say(`callee saw keys ${[...keys].join(",")}; the call is ${slot?.callId}`);
  }
  const rows = await sql<{ run_id: string; n: number; answered: number }>(
    c.databaseUrl,
    `SELECT run_id::text, count(*)::int AS n, count(*) FILTER (WHERE status = 'answered')::int AS answered FROM calls WHERE run_id = ANY($1::uuid[]) GROUP BY run_id`,
    [started.map((s) => s.runId)],
  );
  const rowOf = new Map(rows.map((r) => [r.run_id, r]));
  for (const { runId, tag } of started) {
    const r = rowOf.get(runId);
    if (r?.n !== 1 || r.answered !== 1) problems.push(`${tag} (${runId}): ${r?.n ?? 0} call rows, ${r?.answered ?? 0} answered`);
  }

  // Every tag the callee saw (runs we hold and runs of a start whose answer was lost): one key each, distinct across tags.
  const keyOwners = new Map<string, string>();
  const callee_problems: string[] = [];
  let repeats = 0;
  let remade = 0; // an attempt made again after the callee had answered 200: its answer was lost with the killed worker
  for (const [tag, list] of seen) {
    const keys = new Set(list.map((s) => s.key));
    repeats += list.length - 1;
    if (list.slice(0, -1).some((s) => s.status === 200)) remade++;
    if (keys.size !== 1) callee_problems.push(`${tag}: ${keys.size} keys over ${list.length} requests`);
    for (const k of keys) {
      if (keyOwners.has(k) && keyOwners.get(k) !== tag) callee_problems.push(`key ${k} used by ${keyOwners.get(k)} and ${tag}`);
      keyOwners.set(k, tag);
    }
    if (list.some((s) => !s.verified)) callee_problems.push(`${tag}: a request whose signature did not verify`);
  }
  const requests = [...seen.values()].reduce((n, l) => n + l.length, 0);
  t.log(`runs ${RUNS} | requests ${requests} | repeats ${repeats} | in flight at kill ${activeAtKill} | answered yet made again ${remade} | flaky tags ${[...seen.keys()].filter(flaky).length} | ${seconds} s`);

  t.true(activeAtKill > 4, `the kill hit attempts under way: ${activeAtKill} requests in flight, more than one worker's 4`);
  t.deepEqual(problems, [], "every run finished once, on its answer, its call answered once with one key");
  t.deepEqual(callee_problems, [], "the callee saw repeats only with the same Idempotency-Key, keys distinct across runs, every signature valid");
  const died = c.processes.filter((p) => !killed.has(p) && (p.child.exitCode !== null || p.child.signalCode !== null));
  t.deepEqual(died.map((p) => `${p.role} exited ${p.child.exitCode ?? p.child.signalCode}`), [], "no process died that was not killed");
  t.deepEqual(c.output().filter((l) => /"level":60|uncaught exception/.test(l)), [], "no fatal log line");
});
