/**
 * slotflow on a Sentinel-managed Redis (issue 17 items 4, 6): a master, a replica and three
 * Sentinels, started by the test on free ports (test/helpers/redis-topologies.ts). With
 * REDIS_SENTINELS + REDIS_SENTINEL_MASTER a `web`, a `worker` and a `sweeper` run the
 * vendor-approval example and a burst of deposits, their keys on the master the Sentinels name.
 * Stalling that master (SIGSTOP) makes `/readyz` 503; the Sentinels fail over to the replica, and
 * without any restart `/readyz` is 200 again and a new run is answered through its link. A
 * Sentinel that names no such master is one line and exit 1.
 */
import test from "ava";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { dropDatabase } from "../helpers/db.js";
import { linkIn, waitForEmail } from "../helpers/mail.js";
import { nodeClient, startRedisSentinel, type RedisSentinelServers } from "../helpers/redis-topologies.js";
import { ADMIN_TOKEN, ROOT, request, startCluster, type Cluster } from "../helpers/server.js";
import { cliEntry } from "../helpers/cli-entry.js";

let redis: RedisSentinelServers;
let cluster: Cluster;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test.before(async (t) => {
  t.timeout(120_000);
  redis = await startRedisSentinel();
  cluster = await startCluster("rsentinel", {
    roles: [],
    env: { REDIS_SENTINELS: redis.sentinels, REDIS_SENTINEL_MASTER: redis.name, REDIS_URL: "redis://127.0.0.1:1/0", SLOTFLOW_DEPOSIT_WAIT_MS: "20000" },
  });
  await cluster.spawn("web", { args: [] });
  await cluster.spawn("worker");
  await cluster.spawn("sweeper");
});

test.after.always(async () => {
  for (const s of redis?.servers ?? []) s.child.kill("SIGCONT");
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl).catch(() => undefined);
  await redis?.destroy();
});

async function approve(t: import("ava").ExecutionContext): Promise<void> {
  const name = `Acme-${randomBytes(3).toString("hex")}`;
  const started = await request(cluster.baseUrl, "POST", "/api/workflows/VendorApproval/runs", { token: ADMIN_TOKEN, json: { vendor: { name, contactEmail: "ap@acme.example" }, amount: 1200 } });
  t.is(started.status, 201, started.text);
  const mail = await waitForEmail(cluster.output, `Approve ${name}?`, 30_000);
  const posted = await request(cluster.baseUrl, "POST", new URL(linkIn(mail)).pathname, { json: { ok: true, note: "Looks right" } });
  t.is(posted.status, 200, posted.text);
  const shown = await request(cluster.baseUrl, "GET", `/api/runs/${started.body.id}`, { token: ADMIN_TOKEN });
  t.like(shown.body, { state: "Approved", status: "finished" });
}

test.serial("the vendor-approval example runs on a Sentinel-managed Redis; its keys are on the master", async (t) => {
  const source = (await import("node:fs")).readFileSync(`${ROOT}/examples/vendor-approval.flow`, "utf8");
  const deployed = await request(cluster.baseUrl, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: source });
  t.true(deployed.status === 201 || deployed.status === 200, deployed.text);
  await Promise.all([approve(t), approve(t), approve(t)]);
  const master = nodeClient(await redis.masterPort());
  const keys = await master.keys(`${cluster.env.SLOTFLOW_QUEUE_PREFIX}:commands:*`);
  master.disconnect();
  t.true(keys.length > 0, "command-queue keys on the master the Sentinels name");
});

test.serial("a stalled master: /readyz is 503, the Sentinels fail over, and the processes recover by themselves", async (t) => {
  t.timeout(120_000);
  const before = await redis.masterPort();
  const stalled = redis.servers.find((s) => s.port === before)!;
  stalled.child.kill("SIGSTOP");
  try {
    let saw503 = false;
    const until = Date.now() + 60_000;
    for (;;) {
      const r = await request(cluster.baseUrl, "GET", "/readyz").catch(() => null);
      if (r?.status === 503) saw503 = true;
      if (saw503 && r?.status === 200) break;
      if (Date.now() > until) t.fail(`readiness: saw 503 ${saw503}, last ${r?.status} ${r?.text}`);
      await sleep(100);
    }
    t.true(saw503);
    t.not(await redis.masterPort(), before, "the Sentinels promoted the replica");
    await approve(t); // web, worker and sweeper all on the new master, none restarted
  } finally {
    stalled.child.kill("SIGCONT");
  }
});

test.serial("a Sentinel that names no such master: one line, exit 1", async (t) => {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: cluster.databaseUrl, REDIS_SENTINELS: redis.sentinels, REDIS_SENTINEL_MASTER: "nosuchmaster" };
  const child = spawn(process.execPath, [...cliEntry(), "worker"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr.on("data", (c: Buffer) => (err += c.toString("utf8")));
  child.stdout.resume();
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  const lines = err.split("\n").filter((l) => l !== "");
  t.is(code, 1);
  t.is(lines.length, 1, err);
  t.regex(lines[0]!, /^error: cannot reach the Redis master "nosuchmaster" of the Sentinels at .*\(REDIS_SENTINELS, REDIS_SENTINEL_MASTER\)$/);
});
