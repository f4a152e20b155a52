/**
 * slotflow on a real Redis Cluster (issue 17 items 2, 5): 3 masters with a replica each, started
 * by the test on free ports (test/helpers/redis-topologies.ts). With REDIS_CLUSTER_NODES and
 * SLOTFLOW_QUEUE_SHARDS=3, a `serve` process (web, worker, sweeper) and a `worker --shards 1-2`
 * run the vendor-approval example and a burst of deposits. The test proves it ran on a Cluster:
 * the shards' keys sit on at least two masters, and the same BullMQ queue with an untagged prefix
 * is refused (CROSSSLOT); no link token is in any master's keys or values. A process given one
 * node of the Cluster as REDIS_URL prints one line and exits 1.
 */
import test from "ava";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { Queue, type ConnectionOptions } from "bullmq";
import { deployFixture } from "../helpers/callback.js";
import { dropDatabase, sql } from "../helpers/db.js";
import { linkIn, parseEmails, waitForEmail } from "../helpers/mail.js";
import { startRedisCluster, nodeClient, type RedisClusterServers } from "../helpers/redis-topologies.js";
import { ADMIN_TOKEN, freePort, ROOT, request, startCluster, type Cluster } from "../helpers/server.js";
import { cliEntry } from "../helpers/cli-entry.js";

let redis: RedisClusterServers;
let cluster: Cluster;
let prefix = "";
const SHARDS = 3;

/** A queue prefix whose three shard tags hash to three different masters (so the spread is visible, not luck). */
async function spreadPrefix(servers: RedisClusterServers): Promise<string> {
  for (;;) {
    const p = `sfc-${randomBytes(4).toString("hex")}`;
    const owners = await Promise.all(Array.from({ length: SHARDS }, (_, i) => servers.ownerOf(`{${p}:${i}}`)));
    if (new Set(owners).size === SHARDS) return p;
  }
}

test.before(async (t) => {
  t.timeout(120_000);
  redis = await startRedisCluster();
  prefix = await spreadPrefix(redis);
  cluster = await startCluster("rcluster", {
    roles: [],
    env: { REDIS_CLUSTER_NODES: redis.nodes, REDIS_URL: "redis://127.0.0.1:1", SLOTFLOW_QUEUE_SHARDS: String(SHARDS), SLOTFLOW_QUEUE_PREFIX: prefix, SLOTFLOW_RATE_LIMIT_PER_MINUTE: "100000" },
  });
  await cluster.spawn("serve", { args: ["--deploy", "examples"] });
  await cluster.spawn("worker", { args: ["--shards", "1-2"] });
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl).catch(() => undefined);
  await redis?.destroy();
});

test.serial("the vendor-approval example runs on a Redis Cluster with 3 queue shards", async (t) => {
  const name = `Acme-${randomBytes(3).toString("hex")}`;
  const started = await request(cluster.baseUrl, "POST", "/api/workflows/VendorApproval/runs", { token: ADMIN_TOKEN, json: { vendor: { name, contactEmail: "ap@acme.example" }, amount: 1200 } });
  t.is(started.status, 201, started.text);
  const mail = await waitForEmail(cluster.output, `Approve ${name}?`);
  const posted = await request(cluster.baseUrl, "POST", new URL(linkIn(mail)).pathname, { json: { ok: true, note: "Looks right" } });
  t.is(posted.status, 200, posted.text);
  t.like(posted.body, { status: "completed" }); // v0.4: with its receipt
  t.regex(String((posted.body as { receipt?: unknown } | undefined)?.receipt), /^[\w-]+\.[\w-]+\.[\w-]+$/);
  const shown = await request(cluster.baseUrl, "GET", `/api/runs/${started.body.id}`, { token: ADMIN_TOKEN });
  t.like(shown.body, { state: "Approved", status: "finished" });
  const ready = await request(cluster.baseUrl, "GET", "/readyz");
  t.is(ready.status, 200, ready.text);
  // Bull Board lists every shard's queue.
  const board = await request(cluster.baseUrl, "GET", "/admin/queues/api/queues", { headers: { authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString("base64")}` } });
  t.is(board.status, 200, board.text.slice(0, 300));
  t.deepEqual(((board.body?.queues ?? []) as { name: string }[]).map((q) => q.name).sort(), ["shard0-commands", "shard0-mail", "shard1-commands", "shard1-mail", "shard2-commands", "shard2-mail", "sweep"]);
});

test.serial("a burst of deposits is applied exactly once; the shards' keys sit on three masters; an untagged layout is refused", async (t) => {
  await deployFixture(cluster.baseUrl, "faults.flow");
  const runs = 30;
  const tag = randomBytes(3).toString("hex");
  const ids = await Promise.all(
    Array.from({ length: runs }, async (_, i) => {
      const res = await request(cluster.baseUrl, "POST", "/api/workflows/Faults/runs", { token: ADMIN_TOKEN, json: { job: { title: `c${tag}-${i}`, contact: "x@example.test", handled: 0 } } });
      t.is(res.status, 201, res.text);
      return res.body.id as string;
    }),
  );
  const until = Date.now() + 30_000;
  let links: string[] = [];
  while (links.length < runs && Date.now() < until) {
    const mails = parseEmails(cluster.output());
    links = Array.from({ length: runs }, (_, i) => mails.find((m) => m.subject === `answer c${tag}-${i}`)).filter((m) => m !== undefined).map(linkIn);
    await new Promise((r) => setTimeout(r, 100));
  }
  t.is(links.length, runs);
  const answers = await Promise.all(links.map((url, i) => request(cluster.baseUrl, "POST", new URL(url).pathname, { json: { note: `n${i}` } })));
  t.deepEqual(answers.map((a) => a.status), answers.map(() => 200));
  for (const [i, id] of ids.entries()) {
    const run = await request(cluster.baseUrl, "GET", `/api/runs/${id}`, { token: ADMIN_TOKEN });
    t.like(run.body.entities.job, { handled: 1, note: `n${i}` });
  }

  // Each shard's keys are on the master that owns its tag, and those are three different masters.
  const masters = await redis.masters();
  const holding: number[] = [];
  for (const port of masters) {
    const c = nodeClient(port);
    const keys = await c.keys(`{${prefix}:*`);
    c.disconnect();
    if (keys.some((k) => k.endsWith(":commands:id") || k.includes(":commands:"))) holding.push(port);
  }
  t.true(holding.length >= 2, `masters holding command-queue keys: ${holding.join(",")} of ${masters.join(",")}`);

  // No link's token reaches Redis on any master (jobs carry command ids, never tokens).
  const tokens = links.map((url) => new URL(url).pathname.split("/").pop()!);
  let values = "";
  for (const port of masters) {
    const c = nodeClient(port);
    for (const key of await c.keys(`*${prefix}*`)) {
      const type = await c.type(key);
      if (type === "hash") values += JSON.stringify(await c.hgetall(key));
      else if (type === "string") values += await c.get(key);
      else if (type === "stream") values += JSON.stringify(await c.xrange(key, "-", "+"));
    }
    c.disconnect();
  }
  t.true(values.length > 0);
  t.deepEqual(tokens.filter((tok) => values.includes(tok)), [], "no token in Redis");

  // The same queue without a hash tag: BullMQ's multi-key scripts are refused by the Cluster.
  const client = redis.client();
  const untagged = new Queue("commands", { connection: client as unknown as ConnectionOptions, prefix });
  untagged.on("error", () => undefined);
  const refused = await untagged.add("probe", {}).then(
    () => "",
    (err: Error) => err.message,
  );
  await untagged.close().catch(() => undefined);
  client.disconnect();
  t.regex(refused, /CROSSSLOT/);
});

test.serial("a process given one node of the Cluster as REDIS_URL says so in one line and exits 1", async (t) => {
  const node = redis.procs[0]!.port;
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: cluster.databaseUrl, REDIS_URL: `redis://127.0.0.1:${node}`, SLOTFLOW_QUEUE_PREFIX: prefix };
  const child = spawn(process.execPath, [...cliEntry(), "worker"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr.on("data", (c: Buffer) => (err += c.toString("utf8")));
  child.stdout.resume();
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  const lines = err.split("\n").filter((l) => l !== "");
  t.is(code, 1);
  t.is(lines.length, 1, err);
  t.regex(lines[0]!, new RegExp(`^error: Redis at redis://127\\.0\\.0\\.1:${node} answered: (CROSSSLOT|MOVED).*set REDIS_CLUSTER_NODES \\(REDIS_URL\\)$`));
});

test.serial("a deploy through one web process is seen by another's cached current version, over the Cluster's pub/sub (issue 22)", async (t) => {
  const other = await freePort();
  await cluster.spawn("web", { port: other });
  const viaOther = `http://127.0.0.1:${other}`;
  const input = { vendor: { name: "Cache", contactEmail: "ap@acme.example" }, amount: 10 };
  const versionVia = async (base: string) => {
    const r = await request(base, "POST", "/api/workflows/VendorApproval/runs", { token: ADMIN_TOKEN, json: input });
    t.is(r.status, 201, r.text);
    return r.body.version as number;
  };
  const deployNew = async () => {
    const source = readFileSync(join(ROOT, "examples/vendor-approval.flow"), "utf8") + `\n// issue 22 cache test ${randomBytes(3).toString("hex")}\n`;
    const r = await request(cluster.baseUrl, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: source });
    t.is(r.status, 201, r.text);
    return r.body.version as number;
  };
  /** Starts through the other web process until it uses `want` (at most ~2 s, far under the cache's 30 s). */
  const seenVia = async (want: number) => {
    let v = -1;
    for (let i = 0; i < 50 && v !== want; i++) {
      v = await versionVia(viaOther);
      if (v !== want) await new Promise((res) => setTimeout(res, 40));
    }
    return v;
  };
  const v2 = await deployNew();
  t.is(await seenVia(v2), v2);
  await new Promise((res) => setTimeout(res, 300));
  t.is(await versionVia(viaOther), v2);
  // cached: a change nobody announced is not seen by the other process
  const [{ current_version: old }] = await sql<{ current_version: number }>(cluster.databaseUrl, "SELECT current_version FROM workflows WHERE name = 'VendorApproval'");
  await sql(cluster.databaseUrl, "UPDATE workflows SET current_version = $1 WHERE name = 'VendorApproval'", [v2 - 1]);
  t.is(await versionVia(viaOther), v2);
  await sql(cluster.databaseUrl, "UPDATE workflows SET current_version = $1 WHERE name = 'VendorApproval'", [old]);
  // a deploy through the first web process reaches the other at once
  const v3 = await deployNew();
  t.is(await seenVia(v3), v3);
});
