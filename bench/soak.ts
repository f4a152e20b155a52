/**
 * Benchmark `soak` (issue 20 item 4): an hour-scale steady life of runs compressed into minutes —
 * starts, deposits, expiries and retention's purge all at once — printing every minute the
 * database's size, dead tuples, each run table's size (heap + indexes), the RSS of every slotflow
 * process and the p50/p99 of starts and deposits. The pass: after the warm-up, sizes and RSS stay
 * within 10 % (flat), and p99 does not grow.
 *
 * Web, worker and sweeper run with SLOTFLOW_RETENTION=24h. Each minute:
 * - starts: `starts`/s through the admin API (each mints a link and queues a mail the worker
 *   delivers); their `decision` slot is moved past its deadline 20 s after it opened, so the
 *   sweeper expires it and the run ends (`on decision.expired -> Cancelled`);
 * - deposits: `deposits`/s into runs cloned in SQL at the minute's start (bench/lib/cluster.ts
 *   seedRuns, known tokens), each finishing its run;
 * - time passes faster for ended runs: every 5 s, runs that ended more than 20 s ago have their
 *   `finished_at` moved back 25 h, so the sweeper's retention deletes them within seconds — the
 *   day of a real retention compressed to ~30 s.
 * So runs are born, answered or expired, and deleted at a steady rate, and what stays in the tables
 * is about a minute's worth.
 *
 * PostgreSQL: the soak runs on a server of its own (initdb on a free port, test/helpers/services.ts
 * `startPostgres`) with the settings a production server has — autovacuum on, fsync on — because
 * what it measures (sizes staying flat while rows are deleted) is autovacuum's work: on a server
 * with autovacuum off (this development machine's own, conf.d/90-ci.conf) every deleted row stays
 * as a dead tuple and every table grows whatever slotflow does. `--machine-postgres` uses the
 * server of DATABASE_URL instead and prints its autovacuum setting. This process starts the server,
 * runs the soak in a child process pointed at it (DATABASE_URL is read when the test helpers load),
 * and removes it at the end.
 *
 *   npm run bench -- soak [minutes=10] [starts=20] [deposits=40] [warmup=3] [--machine-postgres]
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** Set in the child process that runs the soak once its own PostgreSQL is up. */
const CHILD_FLAG = "SLOTFLOW_SOAK_CHILD";

if (!process.argv.includes("--machine-postgres") && process.env[CHILD_FLAG] !== "1") {
  const { startPostgres } = await import("../test/helpers/services.js");
  const server = await startPostgres({ settings: ["autovacuum=on", "fsync=on", "max_connections=200"] });
  process.stdout.write(`PostgreSQL of its own on port ${server.port} (autovacuum on, fsync on)\n`);
  try {
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
        stdio: "inherit",
        env: { ...process.env, [CHILD_FLAG]: "1", DATABASE_URL: server.url("postgres") },
      });
      child.once("close", resolve);
    });
    process.exitCode = code ?? 1;
  } finally {
    await server.destroy();
  }
} else {
  await soak();
}

async function soak(): Promise<void> {
const { startBenchCluster } = await import("./lib/cluster.js");
const { loadNote, machineCpu } = await import("./lib/proc.js");
const { drivePaced, fmt, post, postDeposit, writeResult } = await import("./lib/report.js");
type LoadResult = import("./lib/report.js").LoadResult;
const { ADMIN_TOKEN } = await import("../test/helpers/server.js");

const [minutes = 10, starts = 20, deposits = 40, warmup = 3] = process.argv.slice(2).filter((a) => !a.startsWith("--")).map(Number);
const INPUT = { vendor: { name: "Bench", contactEmail: "bench@example.com" }, amount: 10 };
const TABLES = ["runs", "slots", "links", "entity_rows", "history", "outbox", "applied_commands"] as const;
/** Seeded (cloned) runs have ids of this shape (bench/lib/cluster.ts); started ones are random. */
const SEEDED = "aaaaaaaa-0000-4000-8000-%";

interface Minute {
  minute: number;
  databaseMiB: number;
  deadTuples: number;
  tableMiB: Record<string, number>;
  liveRows: Record<string, number>;
  rssMiB: Record<string, number>;
  starts: Pick<LoadResult, "perSecond" | "p50Ms" | "p99Ms" | "statuses">;
  deposits: Pick<LoadResult, "perSecond" | "p50Ms" | "p99Ms" | "statuses">;
}

/** (max − min) ÷ min of `values`: 0.1 is "within 10 %". */
function spread(values: number[]): number {
  const min = Math.min(...values);
  return min > 0 ? (Math.max(...values) - min) / min : 0;
}

async function main() {
  const load0 = machineCpu();
  if (process.env[CHILD_FLAG] !== "1") {
    const client = new (await import("pg")).default.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    const { rows } = await client.query<{ autovacuum: string }>("SHOW autovacuum");
    await client.end();
    process.stdout.write(`PostgreSQL of DATABASE_URL (--machine-postgres): autovacuum ${rows[0]!.autovacuum}\n`);
  }
  const bench = await startBenchCluster("bsoak", { roles: ["web", "worker", "sweeper"], env: { SLOTFLOW_RETENTION: "24h", SLOTFLOW_SWEEP_INTERVAL_MS: "1000" } });
  const q = async (text: string, values: unknown[] = []) => (await bench.pool.query(text, values)).rows;
  const clock = setInterval(() => {
    void (async () => {
      await q(`UPDATE slots SET deadline = now() - interval '1 second'
                WHERE status = 'open' AND alias = 'decision' AND opened_at < now() - interval '20 seconds' AND run_id::text NOT LIKE $1`, [SEEDED]);
      await q(`UPDATE runs SET finished_at = finished_at - interval '25 hours'
                WHERE finished_at > now() - interval '1 hour' AND finished_at < now() - interval '20 seconds'`);
    })().catch((err: unknown) => process.stderr.write(`clock: ${(err as Error).message}\n`));
  }, 5000);
  const rows: Minute[] = [];
  try {
    await bench.deploy("examples/vendor-approval.flow");
    // A request that fails at the socket counts as status 0 (printed with the statuses), so one
    // reset connection does not end an hour-scale run.
    const start = () => post(`${bench.cluster.baseUrl}/api/workflows/VendorApproval/runs`, JSON.stringify(INPUT), { authorization: `Bearer ${ADMIN_TOKEN}` }).catch(() => 0);
    process.stdout.write(`soak: ${minutes} min, ${starts} starts/s and ${deposits} deposits/s; retention 24h with ended runs aged 25 h every 5 s; warm-up ${warmup} min\n`);
    process.stdout.write("min  db MiB  dead tup  runs/slots/links/history/outbox/applied MiB   RSS MiB (web/worker/sweeper)   start p50/p99   deposit p50/p99\n");
    for (let m = 1; m <= minutes; m++) {
      const urls = await bench.seedRuns("VendorApproval", INPUT, deposits * 60, "soak", { from: (m - 1) * deposits * 60 });
      const [s, d] = await Promise.all([
        drivePaced(Array.from({ length: starts * 60 }), starts, start),
        drivePaced(urls, deposits, (u) => postDeposit(u).catch(() => 0)),
      ]);
      const [size] = await q("SELECT pg_database_size(current_database()) AS b");
      const stats = await q(`SELECT relname, n_live_tup, n_dead_tup, pg_total_relation_size(relid) AS bytes FROM pg_stat_user_tables`);
      const of = (name: string) => stats.find((r) => r.relname === name);
      const memory = bench.memory();
      const row: Minute = {
        minute: m,
        databaseMiB: Number(size.b) / 2 ** 20,
        deadTuples: stats.reduce((a, r) => a + Number(r.n_dead_tup), 0),
        tableMiB: Object.fromEntries(TABLES.map((t) => [t, Number(of(t)?.bytes ?? 0) / 2 ** 20])),
        liveRows: Object.fromEntries(TABLES.map((t) => [t, Number(of(t)?.n_live_tup ?? 0)])),
        rssMiB: Object.fromEntries(Object.entries(memory).map(([k, v]) => [k, v.rssKb / 1024])),
        starts: { perSecond: s.perSecond, p50Ms: s.p50Ms, p99Ms: s.p99Ms, statuses: s.statuses },
        deposits: { perSecond: d.perSecond, p50Ms: d.p50Ms, p99Ms: d.p99Ms, statuses: d.statuses },
      };
      rows.push(row);
      process.stdout.write(
        `${String(m).padStart(3)}  ${fmt(row.databaseMiB).padStart(6)}  ${String(row.deadTuples).padStart(8)}  ${TABLES.filter((t) => t !== "entity_rows")
          .map((t) => fmt(row.tableMiB[t]!, 1))
          .join("/")
          .padEnd(40)}  ${Object.values(row.rssMiB)
          .map((v) => fmt(v, 0))
          .join("/")
          .padEnd(28)}  ${fmt(s.p50Ms)}/${fmt(s.p99Ms)} ms  ${fmt(d.p50Ms)}/${fmt(d.p99Ms)} ms ${JSON.stringify({ ...s.statuses, ...Object.fromEntries(Object.entries(d.statuses).map(([k, v]) => [`d${k}`, v])) })}\n`,
      );
    }
    const steady = rows.filter((r) => r.minute > warmup);
    const checks: Record<string, { spread?: number; ratio?: number; pass: boolean }> = {};
    if (steady.length >= 2) {
      const flat = (name: string, values: number[]) => {
        const sp = spread(values);
        checks[name] = { spread: sp, pass: sp <= 0.1 };
      };
      flat("database size", steady.map((r) => r.databaseMiB));
      for (const t of TABLES) flat(`${t} size`, steady.map((r) => r.tableMiB[t]!));
      for (const p of Object.keys(steady[0]!.rssMiB)) flat(`${p} RSS`, steady.map((r) => r.rssMiB[p]!));
      // p99 growth: the last minutes against the first steady ones (halves), not one noisy minute.
      const half = Math.floor(steady.length / 2);
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      for (const kind of ["starts", "deposits"] as const) {
        const first = mean(steady.slice(0, half).map((r) => r[kind].p99Ms));
        const last = mean(steady.slice(steady.length - half).map((r) => r[kind].p99Ms));
        checks[`${kind} p99 (last half ÷ first half)`] = { ratio: last / first, pass: last / first <= 1.1 };
      }
    }
    for (const [name, c] of Object.entries(checks)) {
      process.stdout.write(`${c.pass ? "flat " : "GROWS"}  ${name}: ${c.spread !== undefined ? `spread ${fmt(c.spread * 100)} %` : `${fmt(c.ratio!, 2)}×`}\n`);
    }
    const note = loadNote(load0);
    process.stdout.write(`${note}\nwrote ${writeResult("soak", { note, minutes, starts, deposits, warmup, rows, checks })}\n`);
  } finally {
    clearInterval(clock);
    await bench.stop();
  }
}

await main();
}
