/**
 * Benchmark `deposits`: callback deposits through the whole path — HTTP, body check, BullMQ, a
 * worker's transaction under the run lock, the answer back — against real `slotflow web` and
 * `slotflow worker` processes, at C = 1, 10 and 50 concurrent responders. For each C: deposits/s,
 * p50/p99, CPU ms per deposit summed over web, worker, the PostgreSQL backends and redis-server
 * (from /proc), SQL statements and Redis commands per deposit (counted in the processes by
 * bench/lib/count-preload.mjs; Redis's own INFO commandstats, scripts' inner calls included, beside
 * it), and peak RSS of web and worker. Then, in the same run, the ceilings (bench/lib/ceilings.ts)
 * and the ratio to each. Writes bench/results/deposits-*.json.
 *
 *   npm run bench -- deposits [n1=300] [n10=1500] [n50=1500] [--no-ceilings] [--profile] [--warm=3000] [--paced=4000] [--via=direct,pgbouncer]
 *
 * `--via` lists how web and worker reach PostgreSQL, each measured in turn in this run (own
 * cluster, database and Redis each): `direct` (the default) or `pgbouncer` (a PgBouncer in
 * transaction mode, 20 server connections, its CPU metered as `pgbouncer`; issue 17). With more
 * than one, a last line compares them per phase.
 *
 * Web and worker first answer `--warm` deposits (report.ts WARM_UP), so the figures are those of
 * warmed-up processes, as in production. A last phase offers deposits open-loop at half the
 * highest rate measured (the p99 target's load) and reports their latency: `--paced` deposits,
 * about 10 s at this machine's rates, since a p99 over a few seconds is decided by one hiccup.
 *
 * `--profile` profiles web and worker during the C=10 phase (BENCH_PROFILE_AT=1 or 50 picks another) (V8's CPU profiler, started by the bench preload) (profiles in bench/results/profiles/)
 * and prints where their CPU goes (bench/lib/profile-summary.ts).
 *
 * Each deposit answers a fresh VendorApproval run (examples/vendor-approval.flow) seeded in SQL
 * from one started through the API: the deposit completes `decision`, writes the tracked row,
 * cancels `fixEmail`, finishes the run and burns the link.
 */
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../test/helpers/server.js";
import { summarise } from "./lib/profile-summary.js";
import { machineCpu, loadNote } from "./lib/proc.js";
import { startBenchCluster, type Window } from "./lib/cluster.js";
import { composedCeiling } from "./lib/ceilings.js";
import { drive, drivePaced, fmt, postDeposit, WARM_UP, writeResult, type LoadResult } from "./lib/report.js";
import { applyScript, seedForScript } from "./lib/apply-script.js";

const flags = process.argv.slice(2).filter((a) => a.startsWith("--"));
const [n1 = 300, n10 = 1500, n50 = 1500] = process.argv.slice(2).filter((a) => !a.startsWith("--")).map(Number);
const withCeilings = !flags.includes("--no-ceilings");
const pacedFlag = flags.find((f) => f.startsWith("--paced="));
const viaFlag = flags.find((f) => f.startsWith("--via="));
const vias = (viaFlag ? viaFlag.slice("--via=".length).split(",") : ["direct"]) as ("direct" | "pgbouncer")[];
for (const v of vias) if (v !== "direct" && v !== "pgbouncer") throw new Error(`--via: unknown ${v} (direct, pgbouncer)`);
const profileAt = Number(process.env.BENCH_PROFILE_AT ?? 10);
const profileDir = flags.includes("--profile") ? join(ROOT, "bench/results/profiles", new Date().toISOString().replace(/[:.]/g, "-")) : null;

const INPUT = { vendor: { name: "Bench", contactEmail: "bench@example.com" }, amount: 10 };

export interface PhaseFigures extends LoadResult {
  cpuMsPerDeposit: number;
  cpuMsByProcess: Record<string, number>;
  sqlPerDeposit: number;
  redisCommandsPerDeposit: number;
  redisServerCallsPerDeposit: number;
  sqlByVerb: Record<string, number>;
  redisByName: Record<string, number>;
  /** Main-thread pauses of web and worker during the phase (bench/lib/cluster.ts Window.pauses). */
  pauses: Window["pauses"];
}

export function perDeposit(load: LoadResult, w: Window): PhaseFigures {
  const n = load.ops;
  const total = Object.values(w.cpuMs).reduce((a, b) => a + b, 0);
  const per = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, Number((v / n).toFixed(2))]));
  return {
    ...load,
    cpuMsPerDeposit: total / n,
    cpuMsByProcess: per(w.cpuMs),
    sqlPerDeposit: w.counts.sql / n,
    redisCommandsPerDeposit: w.counts.redis / n,
    redisServerCallsPerDeposit: w.redisServerCalls / n,
    sqlByVerb: per(w.counts.sqlByVerb),
    redisByName: per(w.counts.redisByName),
    pauses: w.pauses,
  };
}

async function main() {
  const byVia: Record<string, Record<string, PhaseFigures>> = {};
  for (const via of vias) {
    if (vias.length > 1) process.stdout.write(`\n== web and worker reach PostgreSQL ${via === "direct" ? "directly" : "through PgBouncer (transaction mode)"} ==\n`);
    byVia[via] = await measureOnce(via);
  }
  if (vias.length > 1) {
    const [a, b] = vias as [string, string];
    for (const phase of Object.keys(byVia[a]!)) {
      const x = byVia[a]![phase]!;
      const y = byVia[b]![phase];
      if (!y) continue;
      process.stdout.write(
        `${phase}: ${a} ${fmt(x.perSecond)}/s p50 ${fmt(x.p50Ms)} ms p99 ${fmt(x.p99Ms)} ms CPU ${fmt(x.cpuMsPerDeposit, 2)} ms · ${b} ${fmt(y.perSecond)}/s p50 ${fmt(y.p50Ms)} ms p99 ${fmt(y.p99Ms)} ms CPU ${fmt(y.cpuMsPerDeposit, 2)} ms\n`,
      );
    }
  }
}

async function measureOnce(via: "direct" | "pgbouncer"): Promise<Record<string, PhaseFigures>> {
  const load0 = machineCpu();
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const bench = await startBenchCluster("bdeposits", { pgbouncer: via === "pgbouncer", ...(profileDir ? { env: { SLOTFLOW_BENCH_CPU_PROF_DIR: profileDir } } : {}) });
  const phases: Record<string, PhaseFigures> = {};
  let ceilings: Record<string, unknown> | null = null;
  try {
    await bench.deploy("examples/vendor-approval.flow");
    const plan = [
      [1, n1],
      [10, n10],
      [50, n50],
    ] as const;
    const warm = WARM_UP;
    const paced = pacedFlag ? Number(pacedFlag.slice("--paced=".length)) : 4000;
    const urls = await bench.seedRuns("VendorApproval", INPUT, warm + plan.reduce((s, [, n]) => s + n, 0) + paced, "deposits");
    process.stdout.write(`seeded ${urls.length} live runs; warming up…\n`);
    await drive(urls.slice(0, warm), 10, (u) => postDeposit(u));
    // peak RSS from here on: under load, not start-up's or the deploy's compile (issue 22)
    bench.resetPeakMemory();
    let at = warm;
    for (const [clients, n] of plan) {
      if (profileDir && clients === profileAt) await bench.toggleProfiles();
      const m = await bench.measure();
      const load = await drive(urls.slice(at, at + n), clients, (u) => postDeposit(u));
      at += n;
      const f = perDeposit(load, await m.stop());
      if (profileDir && clients === profileAt) await bench.toggleProfiles();
      phases[`C${clients}`] = f;
      process.stdout.write(
        `C=${clients}: ${fmt(f.perSecond)} deposits/s, p50 ${fmt(f.p50Ms)} ms, p99 ${fmt(f.p99Ms)} ms, CPU ${fmt(f.cpuMsPerDeposit, 2)} ms/deposit ` +
          `${JSON.stringify(f.cpuMsByProcess)}, SQL ${fmt(f.sqlPerDeposit, 2)}/deposit ${JSON.stringify(f.sqlByVerb)}, Redis ${fmt(f.redisCommandsPerDeposit, 2)} commands/deposit ` +
          `${JSON.stringify(f.redisByName)} (server-side calls incl. scripts' ${fmt(f.redisServerCallsPerDeposit, 1)}), statuses ${JSON.stringify(f.statuses)}\n`,
      );
    }
    // The latency target's load: open-loop arrivals at half the highest rate measured above.
    const half = Math.max(...Object.values(phases).map((f) => f.perSecond)) / 2;
    {
      const m = await bench.measure();
      const load = await drivePaced(urls.slice(at, at + paced), half, (u) => postDeposit(u));
      at += paced;
      const f = perDeposit(load, await m.stop());
      phases.halfRate = f;
      process.stdout.write(
        `paced at half the maximum rate (${fmt(half)}/s offered, ${fmt(f.perSecond)}/s done): p50 ${fmt(f.p50Ms)} ms, p99 ${fmt(f.p99Ms)} ms, CPU ${fmt(f.cpuMsPerDeposit, 2)} ms/deposit ${JSON.stringify(f.cpuMsByProcess)}, statuses ${JSON.stringify(f.statuses)}\n`,
      );
      // What a tail is made of: a major GC or a stalled event loop in web or worker holds every
      // deposit in flight (docs/performance.md "The p99 tail").
      for (const [proc, p] of Object.entries(f.pauses)) {
        process.stdout.write(
          `  ${proc}: ${p.majorGc} major-GC pauses (longest ${fmt(p.longestMajorGcMs)} ms), ${p.stalls} event-loop delays over 10 ms (longest ${fmt(p.longestStallMs)} ms), minor GC ${fmt(p.minorGcMs)} ms in all\n`,
        );
      }
    }
    const memory = bench.memory();
    process.stdout.write(`peak RSS: ${Object.entries(memory).map(([k, v]) => `${k} ${(v.peakKb / 1024).toFixed(0)} MiB`).join(", ")}\n`);

    if (withCeilings) {
      await seedForScript(bench);
      const script = applyScript();
      const measured = await composedCeiling(bench.redis.url, bench.cluster.databaseUrl, script, "one apply's SQL");
      const { queue, sql, together } = measured;
      const [, sql10] = sql;
      const { composed, queuePerSecond: queueBoth, sqlTps } = together;
      const c10 = phases.C10.perSecond;
      process.stdout.write(
        `ceiling, both at once C=10: queue ${fmt(queueBoth)}/s, SQL ${fmt(sqlTps)} tps → composed ceiling ${fmt(composed)}/s; ` +
          `deposits at C=10 are ${fmt(c10 / composed, 2)}× composed, ${fmt(c10 / queue[1]!.perSecond, 2)}× the queue hop, ${fmt(c10 / sql10.tps, 2)}× the SQL\n`,
      );
      ceilings = {
        queue,
        sql,
        together,
        ratios: { c10VsComposed: c10 / composed, c10VsQueue: c10 / queue[1]!.perSecond, c10VsSql: c10 / sql10.tps, c1P50VsQueueP50: phases.C1.p50Ms / queue[0]!.p50Ms },
        applyScript: script,
      };
    }
    const note = loadNote(load0);
    process.stdout.write(`${note}\n`);
    const path = writeResult("deposits", { note, via, phases, memory, ceilings });
    process.stdout.write(`wrote ${path}\n`);
  } finally {
    await bench.stop();
  }
  if (profileDir) {
    const roles = new Map(bench.cluster.processes.map((p) => [`${p.child.pid}.cpuprofile`, p.role]));
    for (const file of readdirSync(profileDir).filter((f) => f.endsWith(".cpuprofile"))) {
      process.stdout.write(`\nprofile of ${roles.get(file) ?? "?"}: ${join(profileDir, file)} (share of busy samples, native calls counted for their JS caller):\n`);
      for (const { bucket, share } of summarise(join(profileDir, file)).slice(0, 12)) process.stdout.write(`${(share * 100).toFixed(1).padStart(6)}%  ${bucket}\n`);
    }
  }
  return phases;
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
