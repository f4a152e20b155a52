/**
 * Upgrading slotflow with live runs (issue 17 §6; docs/deployment.md "Upgrading slotflow with live
 * runs"): during a burst of deposits, a release with a migration is rolled out in the documented
 * order, no process stopped but by SIGTERM (graceful):
 *
 *   1. `slotflow migrate` with the new release's migrations (here: every shipped migration plus an
 *      additive one, a nullable column, as a release must ship them) while the old processes run;
 *   2. workers, one at a time: start the new one, then SIGTERM the old one (it finishes its jobs);
 *   3. web processes, one at a time: SIGTERM (it answers what it accepted), start the new one on
 *      the same port — the other web process takes the traffic meanwhile, as behind a load balancer;
 *   4. the sweeper.
 *
 * Checks (test/helpers/burst.ts): every 200/202 applied exactly once, every client that lost its
 * connection or got 503/202 learns "completed" with a same-key retry, no 5xx but 503, no process
 * died that was not stopped; and no deposit that reached a process was answered 503 (the rollout
 * itself makes nothing unavailable: only connections to a web process being replaced are refused).
 */
import test from "ava";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { join } from "node:path";
import { migrate, MIGRATIONS_DIR } from "../../src/migrate.js";
import { burstTable, prepare, runBurst, type BurstTarget } from "../helpers/burst.js";
import { deployFixture } from "../helpers/callback.js";
import { dropDatabase, sql } from "../helpers/db.js";
import { freePort, startCluster, type Cluster, type ServerProcess } from "../helpers/server.js";
import { startRedis, type RedisServer } from "../helpers/services.js";

const DEPOSITS = Number(process.env.SLOTFLOW_FAULTS_DEPOSITS || 300);

let redis: RedisServer;
let cluster: Cluster;
let target: BurstTarget;
let webPorts: number[] = [];
const webOn = new Map<number, ServerProcess>();
let releaseDir = "";
let pendingFault: Promise<void> | null = null;

process.env.SLOTFLOW_TEST_READY_MS ||= "120000";

test.before(async (t) => {
  t.timeout(600_000);
  redis = await startRedis({ appendonly: true });
  cluster = await startCluster("upgrade", {
    roles: [],
    env: { REDIS_URL: redis.url, SLOTFLOW_RATE_LIMIT_PER_MINUTE: "1000000", SLOTFLOW_DEPOSIT_WAIT_MS: "5000", SLOTFLOW_WORKER_CONCURRENCY: "8" },
  });
  webPorts = [await freePort(), await freePort()];
  for (const port of webPorts) webOn.set(port, await cluster.spawn("web", { port }));
  for (const role of ["worker", "worker", "sweeper"] as const) await cluster.spawn(role);
  target = { cluster, bases: webPorts.map((p) => `http://127.0.0.1:${p}`), killed: new Set() };
  await deployFixture(target.bases[0]!, "faults.flow");
  // The next release's migrations: this one's, plus an additive change.
  releaseDir = mkdtempSync(join(tmpdir(), "slotflow-release-"));
  cpSync(MIGRATIONS_DIR, releaseDir, { recursive: true });
  mkdirSync(join(releaseDir, "29990101000000_next_release"));
  writeFileSync(join(releaseDir, "29990101000000_next_release", "migration.sql"), "ALTER TABLE runs ADD COLUMN next_release_note TEXT;\n");
});

test.after.always(async () => {
  await pendingFault?.catch(() => undefined);
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl).catch(() => undefined);
  await redis?.destroy();
  if (releaseDir) rmSync(releaseDir, { recursive: true, force: true });
});

test.serial("rolling upgrade across a release with a migration: deposits keep being answered", async (t) => {
  t.timeout(600_000);
  const deposits = await prepare(target, "upgrade", DEPOSITS);
  const steps: string[] = [];
  /** [start, end] (epoch ms) of each web process's replacement. */
  const webWindows: [number, number][] = [];
  const rollout = async () => {
    const migrated = await migrate(cluster.databaseUrl, releaseDir);
    steps.push(`migrate: ${migrated.applied.join(",")}`);
    for (const old of cluster.processes.filter((p) => p.role === "worker" && p.child.exitCode === null)) {
      await cluster.spawn("worker");
      target.killed.add(old);
      await old.stop();
      steps.push(`worker ${old.child.pid} replaced (exit ${old.child.exitCode})`);
    }
    for (const port of webPorts) {
      const old = webOn.get(port)!;
      target.killed.add(old);
      const from = Date.now();
      await old.stop();
      // While this one is down the other answers: hold the replacement (≤ 20 s) until a deposit was
      // answered 200 since it stopped, so the window is never too short to show it on a fast run.
      const until = Date.now() + 20_000;
      while (Date.now() < until && !deposits.some((d) => !d.control && d.first?.status === 200 && d.firstAt! >= from)) await sleep(100);
      webOn.set(port, await cluster.spawn("web", { port }));
      webWindows.push([from, Date.now()]);
      steps.push(`web :${port} replaced (exit ${old.child.exitCode})`);
    }
    const sweeper = cluster.processes.find((p) => p.role === "sweeper" && !target.killed.has(p))!;
    target.killed.add(sweeper);
    await sweeper.stop();
    await cluster.spawn("sweeper");
    steps.push("sweeper replaced");
  };
  // Spread over the rollout: while it runs, 16 senders send one deposit each per 5 s (300 deposits
  // cover about a minute; the rollout takes ~30 s on a busy 2-core machine).
  const row = await runBurst(t, target, "rolling upgrade", deposits, () => (pendingFault = rollout()), { paceDuringFaultMs: 5000 });
  t.log(`\n${burstTable([row])}\n${steps.join("\n")}`);
  t.deepEqual(steps[0], "migrate: 29990101000000_next_release", "the release's migration ran during the burst");
  t.is(steps.length, 1 + 2 + 2 + 1);
  t.deepEqual(deposits.filter((d) => !d.control && d.first?.status === 503).map((d) => d.first), [], "no deposit answered 503 during the rollout");
  // Deposits were answered while each web process was being replaced (by the other one).
  const answeredIn = webWindows.map(([from, to]) => deposits.filter((d) => !d.control && d.first?.status === 200 && d.firstAt! >= from && d.firstAt! <= to).length);
  t.true(answeredIn.length === 2 && answeredIn.every((n) => n > 0), `deposits answered 200 during each web replacement: ${answeredIn.join(", ")}`);
  const stopped = [...target.killed].map((p) => p.child.exitCode);
  t.true(stopped.every((c) => c === 0), `every replaced process exited 0 after SIGTERM: ${stopped.join(",")}`);
  const [column] = await sql<{ n: string }>(cluster.databaseUrl, "SELECT count(*) AS n FROM information_schema.columns WHERE table_name = 'runs' AND column_name = 'next_release_note'");
  t.is(Number(column!.n), 1);
});
