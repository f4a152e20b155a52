/**
 * Redis failovers during bursts of deposits (issue 17 item 4; `npm run test:faults`). Each
 * topology is started by the test on free ports (test/helpers/redis-topologies.ts) with its own
 * slotflow processes (web, worker ×2, sweeper) and database:
 *
 * | scenario | topology | fault, a third of the way into the burst |
 * |---|---|---|
 * | (a) | Redis Cluster, 3 masters + 3 replicas, SLOTFLOW_QUEUE_SHARDS=3 | `CLUSTER FAILOVER` on the replica of the master holding shard 0 |
 * | (b) | Sentinel (master, replica, 3 Sentinels) | `SENTINEL FAILOVER` |
 * | (c) | Sentinel | the master stalled 30 s (SIGSTOP, then SIGCONT): the Sentinels promote the replica meanwhile |
 *
 * Deposits alternate between two web processes: one waits up to 5 s for the outcome (mostly 200),
 * the other 1 ms (SLOTFLOW_DEPOSIT_WAIT_MS=1: mostly 202, each confirmed on a replica first), so
 * both promises are exercised across the failover.
 *
 * After each: every 200/202 applied exactly once (the handler ran once, with that body); every
 * 503 or lost answer retried with the same Idempotency-Key learns "completed", applied once; a new
 * run is answered through its link after the fault's end, with no process restarted (workers
 * resumed by themselves; the time it took is logged and kept in the table, not asserted — issue 39); the queues drain — no job left active or waiting (nothing stuck "running" while
 * processing nothing); no process died.
 */
import test, { type ExecutionContext } from "ava";
import { randomBytes, randomUUID } from "node:crypto";
import { deployFixture } from "../helpers/callback.js";
import { dropDatabase } from "../helpers/db.js";
import { linkIn, parseEmails } from "../helpers/mail.js";
import { nodeClient, startRedisCluster, startRedisSentinel, type RedisClusterServers, type RedisSentinelServers } from "../helpers/redis-topologies.js";
import { until } from "../helpers/burst.js";
import { ADMIN_TOKEN, freePort, request, startCluster, type Cluster } from "../helpers/server.js";

const DEPOSITS = Number(process.env.SLOTFLOW_FAULTS_REDIS_DEPOSITS || 120);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
process.env.SLOTFLOW_TEST_READY_MS ||= "120000";

type Answer = { status: number; code?: string };

async function pool<T, R>(items: T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}

async function post(base: string, url: string, body: unknown, key: string): Promise<Answer> {
  try {
    const res = await fetch(base + new URL(url).pathname, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": key },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    let code: string | undefined;
    try {
      code = res.status === 200 || res.status === 202 ? JSON.parse(text).status : JSON.parse(text).code;
    } catch {
      code = undefined;
    }
    return { status: res.status, code };
  } catch {
    return { status: 0 };
  }
}


/** Starts runs of the Faults fixture and reads each one's link from the printed mail. */
async function prepare(c: Cluster, n: number): Promise<{ runId: string; url: string }[]> {
  const tag = randomBytes(3).toString("hex");
  const started = await pool(Array.from({ length: n }, (_, i) => i), 12, async (i) => {
    for (let attempt = 0; ; attempt++) {
      const title = `r${tag}-${i}-a${attempt}`;
      const res = await request(c.baseUrl, "POST", "/api/workflows/Faults/runs", { token: ADMIN_TOKEN, json: { job: { title, contact: "x@example.test", handled: 0 } } }).catch(() => null);
      if (res && (res.status === 201 || res.status === 202)) return { runId: res.body.id as string, title };
      await sleep(500);
    }
  });
  const wanted = new Map(started.map((r, i) => [`answer ${r.title}`, i]));
  const urls: string[] = [];
  await until(`links of ${n} runs`, 120_000, async () => {
    for (const mail of parseEmails(c.output())) {
      const i = wanted.get(mail.subject);
      if (i !== undefined) urls[i] = linkIn(mail);
    }
    return urls.filter(Boolean).length >= n;
  });
  return started.map((r, i) => ({ runId: r.runId, url: urls[i]! }));
}

/** A metric's value from the web process's /metrics (summed over shards by slotflow). */
async function metric(c: Cluster, line: string): Promise<number> {
  const text = (await request(c.baseUrl, "GET", "/metrics")).text;
  const m = text.split("\n").find((l) => l.startsWith(line));
  return m ? Number(m.split(" ").pop()) : 0;
}

const rows: string[] = [];

async function burst(t: ExecutionContext, c: Cluster, name: string, fault: () => Promise<void>): Promise<void> {
  t.timeout(600_000);
  const deposits = (await prepare(c, DEPOSITS)).map((d, i) => ({ ...d, key: randomUUID(), body: { note: `n${i}-${randomBytes(2).toString("hex")}` }, first: undefined as Answer | undefined, final: undefined as Answer | undefined, retries: 0 }));
  let sent = 0;
  let faultDone: Promise<void> | null = null;
  const t0 = Date.now();
  await pool(deposits, 16, async (d) => {
    if (++sent === Math.ceil(DEPOSITS / 3)) faultDone = fault();
    d.first = await post(webs.get(c)![sent % 2]!, d.url, d.body, d.key);
    await sleep(20);
  });
  await faultDone;
  const faultEnded = Date.now();
  // Workers resume by themselves: a new run is answered through its link, with no process
  // restarted. The time it took is logged and kept in the table (issue 39: no wall-clock bound in a
  // test; the wait below only bounds a hang, far above the ~30 s the docs state).
  const [probe] = await prepare(c, 1);
  const probed = await until("a new deposit answered 200 after the fault", 180_000, async () => {
    const a = await post(c.baseUrl, probe!.url, { note: "probe" }, randomUUID());
    return a.status === 200 ? a : null;
  });
  t.is(probed.code, "completed");
  const resumedMs = Date.now() - faultEnded;
  t.log(`resumed ${resumedMs} ms after the fault ended`);

  // Every answer that was not a definite 200 is asked again with its key and body.
  await pool(deposits, 16, async (d) => {
    let a = d.first;
    const end = Date.now() + 120_000;
    while ((!a || a.status !== 200) && Date.now() < end) {
      if (a && a.status !== 0 && a.status !== 202 && a.status !== 503) break; // a refusal: kept as is
      await sleep(a?.status === 202 ? 250 : 500);
      d.retries++;
      a = await post(webs.get(c)![d.retries % 2]!, d.url, d.body, d.key);
    }
    d.final = a;
  });
  const views = await pool(deposits, 16, async (d) => (await request(c.baseUrl, "GET", `/api/runs/${d.runId}`, { token: ADMIN_TOKEN })).body as { entities: { job: { handled: number; note: string | null } } });
  const count = (s: number) => deposits.filter((d) => d.first?.status === s).length;
  rows.push([name, DEPOSITS, count(200), count(202), count(503), count(0), deposits.filter((d) => d.retries > 0).length, ((Date.now() - t0) / 1000).toFixed(1), (resumedMs / 1000).toFixed(1)].join(" | "));
  t.log(`scenario | deposits | 200 | 202 | 503 | lost | retried | seconds | resumed (s)\n${rows.at(-1)}`);

  t.deepEqual(deposits.filter((d) => d.first && d.first.status >= 500 && d.first.status !== 503).map((d) => d.first), [], "no 5xx but 503");
  t.deepEqual(
    deposits.flatMap((d, i) => (views[i]?.entities.job.handled === 1 && views[i]?.entities.job.note === d.body.note ? [] : [{ first: d.first, final: d.final, job: views[i]?.entities.job }])),
    [],
    "every deposit applied exactly once, with its own body",
  );
  t.deepEqual(deposits.filter((d) => !(d.final?.status === 200 && d.final.code === "completed")).map((d) => ({ first: d.first, final: d.final })), [], "every client learned: completed");
  // Nothing stuck: the queues drain (no job left active or waiting).
  await until("the queues drained", 30_000, async () => (await metric(c, 'slotflow_queue_jobs{queue="commands",state="active"}')) === 0 && (await metric(c, 'slotflow_queue_jobs{queue="commands",state="waiting"}')) === 0);
  const died = c.processes.filter((p) => p.child.exitCode !== null || p.child.signalCode !== null);
  t.deepEqual(died.map((p) => `${p.role} exited ${p.child.exitCode ?? p.child.signalCode}`), [], "no process died");
  t.deepEqual(c.output().filter((l) => /"level":60|uncaught exception/.test(l)), [], "no fatal log line");
}

/** Each slotflow's two web processes: [waits 5 s, waits 1 ms]. */
const webs = new Map<Cluster, string[]>();

async function slotflowOn(label: string, env: NodeJS.ProcessEnv): Promise<Cluster> {
  const c = await startCluster(label, { roles: [], env: { SLOTFLOW_RATE_LIMIT_PER_MINUTE: "1000000", SLOTFLOW_DEPOSIT_WAIT_MS: "5000", ...env } });
  await c.spawn("web");
  const fast = await freePort();
  await c.spawn("web", { port: fast, env: { SLOTFLOW_DEPOSIT_WAIT_MS: "1" } });
  webs.set(c, [c.baseUrl, `http://127.0.0.1:${fast}`]);
  for (const role of ["worker", "worker", "sweeper"] as const) await c.spawn(role);
  await deployFixture(c.baseUrl, "faults.flow");
  return c;
}

let clusterServers: RedisClusterServers | undefined;
let sentinelServers: RedisSentinelServers | undefined;
const slotflows: Cluster[] = [];

test.after.always(async () => {
  if (rows.length) console.log(`\nRedis failovers (${DEPOSITS} deposits each)\nscenario | deposits | 200 | 202 | 503 | lost | retried | seconds | resumed (s)\n${rows.join("\n")}\n`);
  for (const s of sentinelServers?.servers ?? []) s.child.kill("SIGCONT");
  await Promise.all(slotflows.map((c) => c.stop()));
  await Promise.all(slotflows.map((c) => dropDatabase(c.databaseUrl).catch(() => undefined)));
  await clusterServers?.destroy();
  await sentinelServers?.destroy();
});

test.serial("(a) CLUSTER FAILOVER of the master holding a queue shard, during a burst", async (t) => {
  t.timeout(600_000);
  clusterServers = await startRedisCluster();
  const prefix = `sff-${randomBytes(3).toString("hex")}`;
  const c = await slotflowOn("rfail-cluster", { REDIS_CLUSTER_NODES: clusterServers.nodes, REDIS_URL: "redis://127.0.0.1:1", SLOTFLOW_QUEUE_SHARDS: "3", SLOTFLOW_QUEUE_PREFIX: prefix });
  slotflows.push(c);
  const servers = clusterServers;
  await burst(t, c, "Cluster: CLUSTER FAILOVER", async () => {
    const master = await servers.ownerOf(`{${prefix}:0}`);
    // Its replica: the node whose CLUSTER NODES line says it replicates that master.
    const m = nodeClient(master);
    const myId = String(await m.call("CLUSTER", "MYID"));
    m.disconnect();
    const replica = servers.procs.find((p) => p.port !== master)!;
    const admin = nodeClient(replica.port);
    const lines = String(await admin.call("CLUSTER", "NODES")).split("\n");
    admin.disconnect();
    const line = lines.find((l) => l.includes(` ${myId} `) && /\bslave\b/.test(l))!;
    const port = Number(/:(\d+)@/.exec(line)![1]);
    const r = nodeClient(port);
    await r.call("CLUSTER", "FAILOVER");
    r.disconnect();
    await until("the replica became master", 30_000, async () => (await servers.ownerOf(`{${prefix}:0}`)) === port);
  });
});

test.serial("(b) SENTINEL FAILOVER during a burst", async (t) => {
  t.timeout(600_000);
  sentinelServers = await startRedisSentinel();
  const s = sentinelServers;
  const c = await slotflowOn("rfail-sentinel", { REDIS_SENTINELS: s.sentinels, REDIS_SENTINEL_MASTER: s.name });
  slotflows.push(c);
  await burst(t, c, "Sentinel: SENTINEL FAILOVER", async () => {
    const before = await s.masterPort();
    const admin = nodeClient(s.sentinelPorts[0]!);
    await admin.call("SENTINEL", "FAILOVER", s.name);
    admin.disconnect();
    await until("the Sentinels switched the master", 30_000, async () => (await s.masterPort()) !== before);
  });
});

test.serial("(c) the Redis master stalled 30 s (SIGSTOP) during a burst", async (t) => {
  t.timeout(600_000);
  const s = sentinelServers ?? (sentinelServers = await startRedisSentinel());
  const c = slotflows.find((x) => x.env.REDIS_SENTINELS) ?? (await slotflowOn("rfail-sentinel", { REDIS_SENTINELS: s.sentinels, REDIS_SENTINEL_MASTER: s.name }));
  if (!slotflows.includes(c)) slotflows.push(c);
  // The previous scenario's old master must be a replica in sync before this one starts.
  await until("a replica in sync", 60_000, async () => {
    const m = nodeClient(await s.masterPort());
    const info = String(await m.info("replication"));
    m.disconnect();
    return /connected_slaves:1/.test(info) && /slave0:.*state=online/.test(info);
  });
  await burst(t, c, "Sentinel: master stalled 30 s", async () => {
    const port = await s.masterPort();
    const proc = s.servers.find((p) => p.port === port)!;
    proc.child.kill("SIGSTOP");
    const stoppedAt = Date.now();
    await until("the Sentinels promoted the replica", 30_000, async () => (await s.masterPort()) !== port).then(
      () => t.log(`promoted after ${Date.now() - stoppedAt} ms`),
      () => t.log("not promoted within the stall"),
    );
    await sleep(Math.max(0, 30_000 - (Date.now() - stoppedAt)));
    proc.child.kill("SIGCONT");
    if (process.env.SLOTFLOW_FAULTS_DEBUG) {
      const counts = new Map<string, number>();
      for (const p of c.processes) for (const l of p.output) {
        const m = /"level":(40|50).*?"err":"([^"]{0,80})/.exec(l.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, "<id>"));
        if (m) counts.set(`${p.role} ${m[2]}`, (counts.get(`${p.role} ${m[2]}`) ?? 0) + 1);
      }
      t.log([...counts].map(([k, v]) => `${v} × ${k}`).join("\n"));
    }
  });
});

test.serial("(a′) a queue shard whose master and replica are both stalled: /readyz 503, then 200 after recovery", async (t) => {
  t.timeout(180_000);
  const servers = clusterServers;
  const c = slotflows.find((x) => x.env.REDIS_CLUSTER_NODES);
  if (!servers || !c) return t.fail("scenario (a) did not start the Cluster");
  const prefix = c.env.SLOTFLOW_QUEUE_PREFIX!;
  t.is((await request(c.baseUrl, "GET", "/readyz")).status, 200);
  const master = await servers.ownerOf(`{${prefix}:1}`);
  const m = nodeClient(master);
  const myId = String(await m.call("CLUSTER", "MYID"));
  const lines = String(await m.call("CLUSTER", "NODES")).split("\n");
  m.disconnect();
  const replica = Number(/:(\d+)@/.exec(lines.find((l) => l.includes(` ${myId} `) && /\bslave\b/.test(l))!)![1]);
  const stalled = servers.procs.filter((p) => p.port === master || p.port === replica);
  t.is(stalled.length, 2);
  for (const p of stalled) p.child.kill("SIGSTOP");
  try {
    const r = await until("/readyz 503", 30_000, async () => {
      const res = await request(c.baseUrl, "GET", "/readyz");
      return res.status === 503 ? res : null;
    });
    t.like(r.body, { status: "unavailable", redis: false });
  } finally {
    for (const p of stalled) p.child.kill("SIGCONT");
  }
  await until("/readyz 200 again", 60_000, async () => (await request(c.baseUrl, "GET", "/readyz")).status === 200);
  const [probe] = await prepare(c, 1);
  const answered = await until("a deposit answered after recovery", 30_000, async () => {
    const a = await post(c.baseUrl, probe!.url, { note: "after" }, randomUUID());
    return a.status === 200 ? a : null;
  });
  t.is(answered.code, "completed");
});
