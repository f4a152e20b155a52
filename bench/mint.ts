/**
 * Benchmark `mint`: runs started per second through the admin API (`POST
 * /api/workflows/VendorApproval/runs`), each start minting one link and queuing one mail, which
 * the worker then delivers (terminal transport). At C = 1, 10 and 50: starts/s, p50/p99 of the start
 * request, and — until every queued mail is delivered — CPU ms, SQL statements (split into the
 * start's and the delivery's by statement text) and Redis commands per start over web, worker,
 * PostgreSQL backends and redis-server; the peak RSS of web and worker after the warm-up.
 *
 * Beside them, in the same run (issue 22 item 4), the ceilings of the parts: a bare BullMQ round
 * trip (bench/lib/ceilings.ts, as for deposits), `pgbench` of one start's SQL (the exact statement
 * the engine sends, captured from a real start, ids made unique per transaction), both at once
 * (the composed ceiling); then the issue's targets, each with the measured figure.
 * Writes bench/results/mint-*.json.
 *
 *   npm run bench -- mint [n1=200] [n10=1000] [n50=1000] [--warm=3000] [--no-ceilings] [--profile]
 *
 * `--profile`: V8's CPU profiler in web and worker during the C=10 phase, summed by package
 * (bench/lib/profile-summary.ts), as for deposits.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { summarise } from "./lib/profile-summary.js";
import { startBenchCluster, type BenchCluster } from "./lib/cluster.js";
import { composedCeiling } from "./lib/ceilings.js";
import { loadNote, machineCpu } from "./lib/proc.js";
import { drive, fmt, post, writeResult, WARM_UP } from "./lib/report.js";
import { perDeposit } from "./deposits.js";
import { ADMIN_TOKEN, ROOT } from "../test/helpers/server.js";
import { createDb } from "../src/db.js";
import { startRun } from "../src/engine/commands/start.js";
import { Sealer } from "../src/engine/sealing/seal.js";
import type { StartWrite } from "../src/engine/sql/start-write.js";
import { loadVersion } from "../src/engine/versions/workflows.js";
import { LIFECYCLES } from "../src/engine/lifecycles/lifecycles.js";

const [n1 = 200, n10 = 1000, n50 = 1000] = process.argv.slice(2).filter((a) => !a.startsWith("--")).map(Number);
const withCeilings = !process.argv.includes("--no-ceilings");
const profileDir = process.argv.includes("--profile") ? join(ROOT, "bench/results/profiles", `mint-${new Date().toISOString().replace(/[:.]/g, "-")}`) : null;
const INPUT_OBJ = { vendor: { name: "Bench", contactEmail: "bench@example.com" }, amount: 10 };
const INPUT = JSON.stringify(INPUT_OBJ);

/** Issue 22 item 4. */
const TARGETS = { c10VsComposed: 0.5, cpuMsPerStart: 3, sqlPerStart: 4, sqlPerDelivery: 3, c1P50Ms: 5 };

/** SQL statements by shape summed over every process (the preload's byText). */
function sqlByText(bench: BenchCluster): Record<string, number> {
  // A process's file being rewritten does not parse: read three times, keep each pid's last good read.
  const byPid = new Map<number, { sql?: { byText?: Record<string, number> } }>();
  for (let i = 0; i < 3; i++) for (const c of bench.rawCounts() as { pid: number; sql?: { byText?: Record<string, number> } }[]) byPid.set(c.pid, c);
  const out: Record<string, number> = {};
  for (const c of byPid.values()) {
    for (const [k, v] of Object.entries(c.sql?.byText ?? {})) out[k] = (out[k] ?? 0) + v;
  }
  return out;
}

/**
 * The pgbench script of one start: the statement `applyStart` sends (sql/start-write.ts) for a real
 * VendorApproval start, every id and token hash in it made unique per transaction from `:startn`.
 */
async function startScript(bench: BenchCluster): Promise<string> {
  const db = createDb(bench.cluster.databaseUrl, 1);
  try {
    const version = 1;
    await loadVersion(db, "VendorApproval", version);
    let json = "";
    const capture = { $queryRawUnsafe: async (_sql: string, j: string) => ((json = j), [{ prior: null }]) };
    const cmd = { kind: "start" as const, commandId: randomUUID(), runId: randomUUID(), workflow: "VendorApproval", version, input: INPUT_OBJ };
    const result = await startRun({ tx: capture as never, sealer: new Sealer(bench.cluster.env.SLOTFLOW_SEAL_KEY!), baseUrl: bench.cluster.baseUrl, lifecycles: LIFECYCLES }, cmd);
    await result.step!.flushStart({ id: cmd.commandId, kind: cmd.kind, outcome: result.outcome });
    const doc = JSON.parse(json) as StartWrite;
    let text = JSON.stringify(doc);
    const uuids = [...new Set(text.match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g) ?? [])];
    uuids.forEach((u, k) => (text = text.replaceAll(u, `${String(k + 1).padStart(8, "0")}-0000-4000-8000-:startn`)));
    for (const l of doc.linksMinted) text = text.replaceAll(l.token_sha256, `${l.token_sha256.slice(0, 52)}:startn`);
    return [`\\set startn random(100000000000, 999999999999)`, `SELECT slotflow_start_write('${text.replaceAll("'", "''")}'::jsonb);`, ""].join("\n");
  } finally {
    await db.$disconnect();
  }
}

async function main() {
  const load0 = machineCpu();
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const bench = await startBenchCluster("bmint", profileDir ? { env: { SLOTFLOW_BENCH_CPU_PROF_DIR: profileDir } } : {});
  const phases: Record<string, ReturnType<typeof perDeposit> & { sqlPerStartOnly: number; sqlPerDelivery: number; sqlByText: Record<string, number> }> = {};
  let ceilings: Record<string, unknown> | null = null;
  let memory: ReturnType<BenchCluster["memory"]> = {};
  try {
    await bench.deploy("examples/vendor-approval.flow");
    const start = () => post(`${bench.cluster.baseUrl}/api/workflows/VendorApproval/runs`, INPUT, { authorization: `Bearer ${ADMIN_TOKEN}` });
    await drive(Array.from({ length: WARM_UP }), 10, start); // warm-up (report.ts WARM_UP)
    const pending = async () => Number((await bench.pool.query("SELECT count(*) FROM outbox WHERE status = 'pending'")).rows[0].count);
    while ((await pending()) > 0) await new Promise((r) => setTimeout(r, 100));
    bench.resetPeakMemory(); // peaks from here on: under load (issue 22 item 3)
    for (const [clients, n] of [
      [1, n1],
      [10, n10],
      [50, n50],
    ] as const) {
      if (n <= 0) continue;
      while ((await pending()) > 0) await new Promise((r) => setTimeout(r, 100));
      const text0 = sqlByText(bench);
      if (profileDir && clients === 10) await bench.toggleProfiles();
      const m = await bench.measure();
      const load = await drive(Array.from({ length: n }), clients, start);
      while ((await pending()) > 0) await new Promise((r) => setTimeout(r, 100));
      const f = perDeposit(load, await m.stop());
      if (profileDir && clients === 10) await bench.toggleProfiles();
      const text1 = sqlByText(bench);
      const byText: Record<string, number> = Object.fromEntries(Object.keys(text1).map((k) => [k, (text1[k]! - (text0[k] ?? 0)) / n]).filter(([, v]) => (v as number) > 0));
      const delivery = Object.entries(byText).filter(([k]) => /\boutbox\b/.test(k)).reduce((s, [, v]) => s + v, 0);
      phases[`C${clients}`] = { ...f, sqlPerStartOnly: f.sqlPerDeposit - delivery, sqlPerDelivery: delivery, sqlByText: byText };
      process.stdout.write(
        `C=${clients}: ${fmt(f.perSecond)} starts/s, p50 ${fmt(f.p50Ms)} ms, p99 ${fmt(f.p99Ms)} ms; per start incl. mail delivery: CPU ${fmt(f.cpuMsPerDeposit, 2)} ms ${JSON.stringify(f.cpuMsByProcess)}, ` +
          `SQL ${fmt(f.sqlPerDeposit, 2)} (start ${fmt(f.sqlPerDeposit - delivery, 2)}, delivery ${fmt(delivery, 2)}) ${JSON.stringify(f.sqlByVerb)}, Redis ${fmt(f.redisCommandsPerDeposit, 2)} ${JSON.stringify(f.redisByName)}, statuses ${JSON.stringify(f.statuses)}\n`,
      );
    }
    memory = bench.memory();
    process.stdout.write(`peak RSS after the warm-up: ${Object.entries(memory).map(([k, v]) => `${k} ${(v.peakKb / 1024).toFixed(0)} MiB`).join(", ")}\n`);

    if (withCeilings) {
      const script = await startScript(bench);
      const measured = await composedCeiling(bench.redis.url, bench.cluster.databaseUrl, script, "one start's SQL");
      const { queuePerSecond, sqlTps, composed } = measured.together;
      process.stdout.write(`ceiling, both at once C=10: queue ${fmt(queuePerSecond)}/s, SQL ${fmt(sqlTps)} tps → composed ceiling ${fmt(composed)}/s\n`);
      ceilings = { ...measured, startScript: script };
    }
    const c10 = phases.C10;
    const c1 = phases.C1;
    const composed = (ceilings?.together as { composed: number } | undefined)?.composed;
    const rows: [string, string, boolean | null][] = [
      [`starts/s at C=10 ≥ ${TARGETS.c10VsComposed}× the composed ceiling`, composed && c10 ? `${fmt(c10.perSecond)}/s = ${fmt(c10.perSecond / composed, 2)}× of ${fmt(composed)}/s` : "not measured", composed && c10 ? c10.perSecond / composed >= TARGETS.c10VsComposed : null],
      [`CPU per start incl. delivery ≤ ${TARGETS.cpuMsPerStart} ms (C=10)`, c10 ? `${fmt(c10.cpuMsPerDeposit, 2)} ms` : "not measured", c10 ? c10.cpuMsPerDeposit <= TARGETS.cpuMsPerStart : null],
      [`SQL ≤ ${TARGETS.sqlPerStart} per start + ≤ ${TARGETS.sqlPerDelivery} per delivery`, c10 ? `${fmt(c10.sqlPerStartOnly, 2)} + ${fmt(c10.sqlPerDelivery, 2)}` : "not measured", c10 ? c10.sqlPerStartOnly <= TARGETS.sqlPerStart && c10.sqlPerDelivery <= TARGETS.sqlPerDelivery : null],
      [`C=1 p50 ≤ ${TARGETS.c1P50Ms} ms`, c1 ? `${fmt(c1.p50Ms, 1)} ms` : "not measured", c1 ? c1.p50Ms <= TARGETS.c1P50Ms : null],
      [`peak RSS web / worker ≤ 200 MiB`, Object.entries(memory).map(([k, v]) => `${k} ${(v.peakKb / 1024).toFixed(0)}`).join(", ") + " MiB", Object.values(memory).every((v) => v.peakKb <= 200 * 1024)],
    ];
    process.stdout.write(`\ntargets (issue 22):\n${rows.map(([t, m, ok]) => `  ${ok === null ? "?" : ok ? "met" : "NOT met"}  ${t}: ${m}`).join("\n")}\n`);
    const note = loadNote(load0);
    process.stdout.write(`${note}\nwrote ${writeResult("mint", { note, phases, memory, ceilings, targets: rows.map(([target, measured, met]) => ({ target, measured, met })) })}\n`);
  } finally {
    await bench.stop();
  }
  if (profileDir) {
    const roles = new Map(bench.cluster.processes.map((p) => [`${p.child.pid}.cpuprofile`, p.role]));
    for (const file of readdirSync(profileDir).filter((f) => f.endsWith(".cpuprofile"))) {
      process.stdout.write(`\nprofile of ${roles.get(file) ?? "?"} (C=10): ${join(profileDir, file)} (share of busy samples, native calls counted for their JS caller):\n`);
      for (const { bucket, share } of summarise(join(profileDir, file)).slice(0, 12)) process.stdout.write(`${(share * 100).toFixed(1).padStart(6)}%  ${bucket}\n`);
    }
  }
}

await main();
