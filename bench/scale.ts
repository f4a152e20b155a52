/**
 * Benchmark `scale`: deposit latency and CPU with 1k, 100k and 1M live runs (each with its tracked
 * row, two slots and a live link) in the tables. Live runs are cloned in SQL in chunks of 50k
 * (bench/lib/cluster.ts `seedRuns`), then `ANALYZE`d; at each size 500 deposits at C=1 and 1,000 at
 * C=10 are measured, then the runs list (issue 23): the p50 of `GET /api/runs` pages filtered as
 * an operator filters them (`LIST_QUERIES`: waiting on an alias, a status, a page deep in the
 * keyset), 40 requests each at C=1. The target: latency at 1M within 1.2× of 1k (every hot statement is a
 * primary-key or unique-index probe). Web and worker are warmed up first (report.ts WARM_UP).
 * Writes bench/results/scale-*.json.
 *
 *   npm run bench -- scale [sizes=1000,100000,1000000] [--warm=3000]
 */
import { startBenchCluster } from "./lib/cluster.js";
import { loadNote, machineCpu } from "./lib/proc.js";
import { drive, fmt, percentile, postDeposit, writeResult, WARM_UP } from "./lib/report.js";
import { ADMIN_TOKEN, request } from "../test/helpers/server.js";
import { perDeposit } from "./deposits.js";

const sizes = (process.argv.slice(2).find((a) => !a.startsWith("--")) ?? "1000,100000,1000000").split(",").map(Number);
const INPUT = { vendor: { name: "Bench", contactEmail: "bench@example.com" }, amount: 10 };
const N1 = 500;
const N10 = 1000;
/** Filtered pages of the runs list measured at each size (issue 23); `deep` follows the cursor 20 pages first. */
const LIST_QUERIES: Record<string, string> = {
  waitingDecision: "?workflow=VendorApproval&waiting=decision&limit=50",
  finished: "?status=finished&limit=50",
  stateApproved: "?workflow=VendorApproval&state=Approved&limit=50",
  deepRunning: "?status=running&limit=50",
};
const LIST_N = 40;

/** p50 (ms) of `GET /api/runs` for each of LIST_QUERIES, C=1. */
async function listPages(baseUrl: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [name, query] of Object.entries(LIST_QUERIES)) {
    let q = query;
    if (name.startsWith("deep")) {
      for (let i = 0; i < 20; i++) {
        const page = await request(baseUrl, "GET", `/api/runs${q}`, { token: ADMIN_TOKEN });
        if (!page.body?.nextCursor) break;
        q = `${query}&cursor=${encodeURIComponent(page.body.nextCursor)}`;
      }
    }
    const ms: number[] = [];
    for (let i = 0; i < LIST_N; i++) {
      const t0 = performance.now();
      const res = await request(baseUrl, "GET", `/api/runs${q}`, { token: ADMIN_TOKEN });
      ms.push(performance.now() - t0);
      if (res.status !== 200) throw new Error(`GET /api/runs${q}: ${res.status} ${res.text}`);
    }
    out[name] = percentile(ms.sort((a, b) => a - b), 50);
  }
  return out;
}

async function main() {
  const load0 = machineCpu();
  const bench = await startBenchCluster("bscale");
  const results: Record<string, unknown>[] = [];
  try {
    await bench.deploy("examples/vendor-approval.flow");
    // Warm-up (report.ts WARM_UP) on runs of their own, ids past every size: once answered they
    // are finished runs with burned links, so the smallest size has these rows in its tables too.
    const warm = await bench.seedRuns("VendorApproval", INPUT, WARM_UP, "scale-warm", { from: 100_000_000 });
    await drive(warm, 10, (u) => postDeposit(u));
    let live = 0;
    for (const size of sizes) {
      const t0 = performance.now();
      const urls = await bench.seedRuns("VendorApproval", INPUT, size - live, "scale", { from: live });
      live = size;
      const dbMiB = Number((await bench.pool.query("SELECT pg_database_size(current_database()) AS b")).rows[0].b) / 2 ** 20;
      process.stdout.write(`${size} live runs (seeded in ${fmt((performance.now() - t0) / 1000)} s; database ${fmt(dbMiB, 0)} MiB)\n`);
      // Deposit into runs spread over the whole range (the newest rows are not special).
      const step = Math.max(1, Math.floor(urls.length / (N1 + N10 + 50)));
      const picked = urls.filter((_, i) => i % step === 0).slice(0, N1 + N10 + 50);
      await drive(picked.slice(0, 50), 10, (u) => postDeposit(u));
      const row: Record<string, unknown> = { liveRuns: size, databaseMiB: dbMiB };
      for (const [clients, batch] of [
        [1, picked.slice(50, 50 + N1)],
        [10, picked.slice(50 + N1)],
      ] as const) {
        const m = await bench.measure();
        const f = perDeposit(await drive(batch, clients, (u) => postDeposit(u)), await m.stop());
        row[`C${clients}`] = f;
        process.stdout.write(`  C=${clients}: ${fmt(f.perSecond)}/s, p50 ${fmt(f.p50Ms)} ms, p99 ${fmt(f.p99Ms)} ms, CPU ${fmt(f.cpuMsPerDeposit, 2)} ms/deposit, SQL ${fmt(f.sqlPerDeposit, 2)}, statuses ${JSON.stringify(f.statuses)}\n`);
      }
      const list = await listPages(bench.cluster.baseUrl);
      row.listPageP50Ms = list;
      process.stdout.write(`  runs list p50 (ms): ${Object.entries(list).map(([k, v]) => `${k} ${fmt(v, 2)}`).join(", ")}\n`);
      results.push(row);
      live += 0;
    }
    const first = results[0] as { C1: { p50Ms: number; cpuMsPerDeposit: number } };
    const last = results[results.length - 1] as { C1: { p50Ms: number; cpuMsPerDeposit: number } };
    process.stdout.write(`p50 at ${sizes[sizes.length - 1]} vs ${sizes[0]}: ${fmt(last.C1.p50Ms / first.C1.p50Ms, 2)}×; CPU per deposit ${fmt(last.C1.cpuMsPerDeposit / first.C1.cpuMsPerDeposit, 2)}×\n`);
    const note = loadNote(load0);
    process.stdout.write(`${note}\nwrote ${writeResult("scale", { note, results })}\n`);
  } finally {
    await bench.stop();
  }
}

await main();
