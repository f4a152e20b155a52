/**
 * Benchmark `purge` (issue 20 item 1): deposits' latency while retention deletes E ended runs,
 * against the same deposits without it, in one run on one machine.
 *
 * E runs of examples/vendor-approval.flow are cloned in SQL (each: its run row, tracked row, two
 * slots and a link) and marked ended 40 days ago; D more runs stay live for the deposits. Phase
 * `without`: N deposits paced at R/s (open loop, bench/lib/report.ts drivePaced), no sweeper.
 * Phase `with`: a `slotflow sweeper` with SLOTFLOW_RETENTION=30d starts, and the same paced load
 * runs while it purges. Prints p50/p99 of both phases, the purge's rate (runs/s and rows/s), its
 * statements, and the plan of one purge batch. Writes bench/results/purge-*.json.
 *
 *   npm run bench -- purge [ended=1000000] [rate=100] [deposits=3000] [--full] [--warm=N]
 */
import { startBenchCluster } from "./lib/cluster.js";
import { loadNote, machineCpu } from "./lib/proc.js";
import { drive, drivePaced, fmt, postDeposit, writeResult, WARM_UP } from "./lib/report.js";

const [ended = 1_000_000, rate = 100, deposits = 3000] = process.argv.slice(2).filter((a) => !a.startsWith("--")).map(Number);
const INPUT = { vendor: { name: "Bench", contactEmail: "bench@example.com" }, amount: 10 };

async function main() {
  const load0 = machineCpu();
  const bench = await startBenchCluster("bpurge", { env: { SLOTFLOW_RETENTION: "off" } });
  try {
    await bench.deploy("examples/vendor-approval.flow");
    const t0 = performance.now();
    await bench.seedRuns("VendorApproval", INPUT, ended, "purge", { returnUrls: false });
    await bench.pool.query(
      `UPDATE runs SET status = 'finished', state = 'Approved', finished_at = now() - interval '40 days'
        WHERE id < ('aaaaaaaa-0000-4000-8000-' || lpad($1::text, 12, '0'))::uuid`,
      [ended],
    );
    const rowsOf = async () =>
      Number(
        (
          await bench.pool.query(
            `SELECT (SELECT count(*) FROM runs) + (SELECT count(*) FROM slots) + (SELECT count(*) FROM links) + (SELECT count(*) FROM entity_rows) AS n`,
          )
        ).rows[0].n,
      );
    const endedLeft = async () => Number((await bench.pool.query("SELECT count(*) AS n FROM runs WHERE finished_at IS NOT NULL")).rows[0].n);
    const live = await bench.seedRuns("VendorApproval", INPUT, WARM_UP + 2 * deposits, "purge-live", { from: ended });
    await bench.pool.query("VACUUM ANALYZE");
    const rows0 = await rowsOf();
    process.stdout.write(`${ended} ended runs and ${live.length} live ones seeded in ${fmt((performance.now() - t0) / 1000)} s (${rows0} rows in runs, slots, links, entity_rows)\n`);

    const plan = (
      await bench.pool.query(`EXPLAIN (FORMAT TEXT)
        SELECT id FROM runs WHERE finished_at <= now() - interval '30 days' AND status IN ('finished', 'cancelled')
         ORDER BY finished_at LIMIT 500 FOR UPDATE SKIP LOCKED`)
    ).rows.map((r) => r["QUERY PLAN"] as string);
    process.stdout.write(`a purge batch's scan:\n  ${plan.join("\n  ")}\n`);

    await drive(live.slice(0, WARM_UP), 10, (u) => postDeposit(u));
    const without = await drivePaced(live.slice(WARM_UP, WARM_UP + deposits), rate, (u) => postDeposit(u));
    process.stdout.write(`without purge: ${deposits} deposits at ${rate}/s: p50 ${fmt(without.p50Ms)} ms, p99 ${fmt(without.p99Ms)} ms ${JSON.stringify(without.statuses)}\n`);

    const m = await bench.measure();
    const p0 = performance.now();
    await bench.cluster.spawn("sweeper", { env: { SLOTFLOW_RETENTION: "30d" } });
    // Let the purge get going before the measured deposits start.
    while ((await endedLeft()) === ended && performance.now() - p0 < 30_000) await new Promise((r) => setTimeout(r, 100));
    const during = await drivePaced(live.slice(WARM_UP + deposits), rate, (u) => postDeposit(u));
    const leftAfterLoad = await endedLeft();
    process.stdout.write(`with purge:    ${deposits} deposits at ${rate}/s: p50 ${fmt(during.p50Ms)} ms, p99 ${fmt(during.p99Ms)} ms ${JSON.stringify(during.statuses)} (${ended - leftAfterLoad} runs purged meanwhile)\n`);
    // The rate is measured over at most 2 more minutes (`--full`: until every ended run is gone).
    const cap = Date.now() + (process.argv.includes("--full") ? Math.max(300_000, ended * 2) : 120_000);
    let left = leftAfterLoad;
    while ((left = await endedLeft()) > 0 && Date.now() < cap) await new Promise((r) => setTimeout(r, 1000));
    const seconds = (performance.now() - p0) / 1000;
    const w = await m.stop();
    const rowsGone = rows0 - (await rowsOf());
    const purgeStatements = Object.entries(w.counts.sqlByVerb).filter(([verb]) => verb === "WITH").reduce((a, [, n]) => a + n, 0);
    const result = {
      ended,
      purged: ended - left,
      seconds,
      runsPerSecond: (ended - left) / seconds,
      rowsPerSecond: rowsGone / seconds,
      cpuMsByProcess: w.cpuMs,
      sqlByVerb: w.counts.sqlByVerb,
      purgeStatements,
      deposits: { rate, without, during },
      plan,
    };
    process.stdout.write(
      `purged ${result.purged}/${ended} ended runs (${rowsGone} rows) in ${fmt(seconds)} s: ${fmt(result.runsPerSecond, 0)} runs/s, ${fmt(result.rowsPerSecond, 0)} rows/s; statements ${JSON.stringify(w.counts.sqlByVerb)}\n` +
        `deposits p99: ${fmt(without.p99Ms)} ms without, ${fmt(during.p99Ms)} ms during the purge (${fmt(during.p99Ms / without.p99Ms, 2)}×)\n`,
    );
    const note = loadNote(load0);
    process.stdout.write(`${note}\nwrote ${writeResult("purge", { note, result })}\n`);
  } finally {
    await bench.stop();
  }
}

await main();
