/**
 * The two ceilings a deposit is measured against, on the same machine in the same run:
 *
 * - the queue hop: a bare BullMQ round trip (Queue.add with slotflow's job options → a no-op
 *   worker with slotflow's connection and concurrency → completion seen through QueueEvents with
 *   Job.waitUntilFinished), at C concurrent producers;
 * - the SQL: `pgbench -f` running the statements of one deposit's apply (the same SQL text the
 *   worker sends, from src/engine/sql/), against seeded rows;
 * - composed: both at once on the same cores (the lower of the two rates is the composed ceiling).
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Queue, QueueEvents, type ConnectionOptions } from "bullmq";
import { Redis } from "ioredis";
import pg from "pg";
import { COMMAND_JOB_OPTIONS, QUEUE, redisConnection } from "../../src/queue/queues.js";
import { ROOT } from "../../test/helpers/server.js";
import { cpuMs } from "./proc.js";
import { drive, type LoadResult } from "./report.js";

export interface QueueCeiling {
  runs: (LoadResult & { cpuMsPerOp: number })[];
  stop(): Promise<void>;
  /** Keeps C producers busy for `seconds`; returns round trips per second. */
  sustain(clients: number, seconds: number): Promise<number>;
}

export async function queueCeiling(redisUrl: string, plan: { clients: number; ops: number }[]): Promise<QueueCeiling> {
  const prefix = `bench-ceiling-${randomBytes(3).toString("hex")}`;
  const child = spawn(process.execPath, ["--import=tsx", join(ROOT, "bench/lib/noop-worker.ts"), redisUrl, prefix, "8"], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => d.toString().includes("ready") && resolve());
    child.once("exit", (code) => reject(new Error(`noop worker exited ${code}`)));
  });
  const connection = redisConnection({ redisUrl }, false);
  const queue = new Queue(QUEUE.commands, { connection: connection as ConnectionOptions, prefix });
  queue.setMaxListeners(1000); // Job.waitUntilFinished adds a 'closing' listener per wait
  const eventsConn = redisConnection({ redisUrl }, true);
  const events = new QueueEvents(QUEUE.commands, { connection: eventsConn as ConnectionOptions, prefix });
  await events.waitUntilReady();
  const probe = new Redis(redisUrl);
  const redisPid = Number((await probe.info("server")).match(/process_id:(\d+)/)?.[1]);
  probe.disconnect(); // a client left open would reconnect forever once the bench's Redis stops
  const roundTrip = async () => {
    const job = await queue.add("noop", { n: 1 }, { ...COMMAND_JOB_OPTIONS, jobId: randomBytes(16).toString("hex") });
    await job.waitUntilFinished(events, 30_000);
    return 200;
  };
  await drive(Array.from({ length: 100 }), 10, roundTrip); // warm-up
  const runs: QueueCeiling["runs"] = [];
  for (const { clients, ops } of plan) {
    const pids = [process.pid, child.pid!, redisPid];
    const c0 = pids.map((p) => cpuMs(p) ?? 0);
    const r = await drive(Array.from({ length: ops }), clients, roundTrip);
    const c1 = pids.map((p) => cpuMs(p) ?? 0);
    runs.push({ ...r, cpuMsPerOp: c1.reduce((s, v, i) => s + v - c0[i], 0) / ops });
  }
  return {
    runs,
    async sustain(clients, seconds) {
      let n = 0;
      const until = performance.now() + seconds * 1000;
      const t0 = performance.now();
      await Promise.all(Array.from({ length: clients }, async () => {
        while (performance.now() < until) {
          await roundTrip();
          n++;
        }
      }));
      return n / ((performance.now() - t0) / 1000);
    },
    async stop() {
      await events.close();
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      child.kill("SIGTERM");
      eventsConn.disconnect();
      connection.disconnect();
    },
  };
}

export interface SqlCeiling {
  clients: number;
  seconds: number;
  tps: number;
  /** CPU ms of the PostgreSQL backends per transaction. */
  backendCpuMsPerTx: number;
}

/** Runs `pgbench -n -f <script>` for `seconds` with `clients` connections against `databaseUrl`. */
export async function sqlCeiling(databaseUrl: string, script: string, clients: number, seconds: number): Promise<SqlCeiling> {
  const dir = mkdtempSync(join(tmpdir(), "slotflow-pgbench-"));
  const file = join(dir, "apply.sql");
  writeFileSync(file, script);
  const url = new URL(databaseUrl);
  const args = ["-n", "-f", file, "-c", String(clients), "-j", "2", "-T", String(seconds), "-h", url.hostname, "-p", url.port || "5432", "-U", url.username || "postgres", url.pathname.slice(1)];
  const child = spawn("pgbench", args, { stdio: ["ignore", "pipe", "pipe"] });
  // listened for from the start: a pgbench that ends early (a loaded machine) must not hang the bench
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const admin = new pg.Client({ connectionString: new URL("/postgres", databaseUrl).toString() });
  await admin.connect();
  await new Promise((r) => setTimeout(r, 700));
  const pids = (await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = 'pgbench'", [url.pathname.slice(1)])).rows.map((r) => r.pid);
  const xacts = async () => Number((await admin.query("SELECT xact_commit FROM pg_stat_database WHERE datname = $1", [url.pathname.slice(1)])).rows[0].xact_commit);
  const c0 = pids.reduce((s, p) => s + (cpuMs(p) ?? 0), 0);
  const x0 = await xacts();
  await new Promise((r) => setTimeout(r, Math.max(500, seconds * 1000 - 1500)));
  const c1 = pids.reduce((s, p) => s + (cpuMs(p) ?? 0), 0);
  const x1 = await xacts();
  await exited;
  await admin.end();
  const tps = Number(/tps = ([\d.]+)/.exec(out)?.[1] ?? NaN);
  if (!Number.isFinite(tps)) throw new Error(`pgbench failed:\n${out}`);
  return { clients, seconds, tps, backendCpuMsPerTx: (c1 - c0) / Math.max(1, x1 - x0) };
}

/** What `composedCeiling` measured: the queue hop alone, the SQL alone (C=1, C=10), then both at once at C=10. */
export interface ComposedCeiling {
  queue: QueueCeiling["runs"];
  sql: [SqlCeiling, SqlCeiling];
  together: { queuePerSecond: number; sqlTps: number; composed: number };
}

/**
 * The ceilings of an operation's parts in one run (issue 7's method, reused by issue 22): a bare
 * BullMQ round trip at C=1 (500 ops) and C=10 (2,000), `pgbench` of the operation's SQL `script`
 * at C=1 and C=10 (5 s each), then both at once at C=10 (6 s); the composed ceiling is the lower of
 * the two rates reached together (ops/s). Prints one line per figure, naming the SQL `what`.
 */
export async function composedCeiling(redisUrl: string, databaseUrl: string, script: string, what: string): Promise<ComposedCeiling> {
  const q = await queueCeiling(redisUrl, [
    { clients: 1, ops: 500 },
    { clients: 10, ops: 2000 },
  ]);
  for (const r of q.runs) {
    process.stdout.write(`ceiling, bare BullMQ round trip C=${r.clients}: ${r.perSecond.toFixed(1)}/s, p50 ${r.p50Ms.toFixed(2)} ms, p99 ${r.p99Ms.toFixed(2)} ms, CPU ${r.cpuMsPerOp.toFixed(2)} ms/op\n`);
  }
  const sql1 = await sqlCeiling(databaseUrl, script, 1, 5);
  const sql10 = await sqlCeiling(databaseUrl, script, 10, 5);
  for (const s of [sql1, sql10]) process.stdout.write(`ceiling, pgbench of ${what} C=${s.clients}: ${s.tps.toFixed(1)} tps, backend CPU ${s.backendCpuMsPerTx.toFixed(2)} ms/tx\n`);
  const [sqlBoth, queueBoth] = await Promise.all([sqlCeiling(databaseUrl, script, 10, 6), q.sustain(10, 6)]);
  await q.stop();
  return { queue: q.runs, sql: [sql1, sql10], together: { queuePerSecond: queueBoth, sqlTps: sqlBoth.tps, composed: Math.min(sqlBoth.tps, queueBoth) } };
}
