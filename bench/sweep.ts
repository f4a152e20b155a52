/**
 * Benchmark `sweep`: E slots past their deadline among O open ones (default 100k among 1M). Runs
 * are cloned in SQL (every clone's `decision` slot is open with a 7-day deadline), the deadline of
 * E of them is moved into the past, then a `slotflow sweeper` starts beside web and worker, and
 * the benchmark waits until all E are expired. Prints seconds, expiries per second, CPU, SQL
 * statements and Redis commands per expired slot (the sweeper's own: one statement and one Redis
 * call per batch of 500), and the plan of the due-slot query, which reads the expired only.
 * Writes bench/results/sweep-*.json.
 *
 * Due timers are part of the sweep (issue 19): T more runs of examples/purchase-approval.flow wait
 * in Review with their reminder timer (`every 2d after 1d`, a row of `slots`) moved into the past,
 * so the same sweeper query finds E due slots and T due timers; each firing mints a fresh link and
 * queues a reminder. The figures per expiry count both (`fired` says how many timers fired).
 *
 *   npm run bench -- sweep [expired=100000] [open=1000000] [timers=expired/10]
 */
import { startBenchCluster } from "./lib/cluster.js";
import { loadNote, machineCpu } from "./lib/proc.js";
import { fmt, writeResult } from "./lib/report.js";

const [expired = 100_000, open = 1_000_000, timersArg] = process.argv.slice(2).map(Number);
const timers = timersArg ?? Math.floor(expired / 10);
const TIMER_INPUT = {
  request: { item: "Bench", amount: 500, approverEmail: "bench@example.com", approvalUrl: null, reminders: 0, escalated: false, note: null },
  autoApproveUpTo: 100,
};
const INPUT = { vendor: { name: "Bench", contactEmail: "bench@example.com" }, amount: 10 };

async function main() {
  const load0 = machineCpu();
  const bench = await startBenchCluster("bsweep");
  try {
    await bench.deploy("examples/vendor-approval.flow");
    const t0 = performance.now();
    await bench.seedRuns("VendorApproval", INPUT, open, "sweep", { returnUrls: false });
    process.stdout.write(`${open} open runs seeded in ${fmt((performance.now() - t0) / 1000)} s\n`);
    await bench.pool.query(
      `UPDATE slots SET deadline = now() - interval '1 minute'
        WHERE alias = 'decision' AND id >= 'b1bbbbbb-0000-4000-8000-000000000000' AND id < ('b1bbbbbb-0000-4000-8000-' || lpad($1::text, 12, '0'))::uuid`,
      [expired],
    );
    if (timers > 0) {
      await bench.deploy("examples/purchase-approval.flow");
      // Clone ids continue after the open runs' (`from`), so the two seeds never collide.
      await bench.seedRuns("PurchaseApproval", TIMER_INPUT, timers, "sweept", { returnUrls: false, from: open });
      await bench.pool.query(`UPDATE slots SET deadline = now() - interval '1 minute' WHERE alias = '@timer:0' AND status = 'open'`);
    }
    await bench.pool.query("ANALYZE slots");
    const plan = (await bench.pool.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT TEXT)
      SELECT id, run_id FROM slots WHERE status = 'open' AND deadline <= now() ORDER BY deadline LIMIT 500`)).rows.map((r) => r["QUERY PLAN"]);
    process.stdout.write(`the sweeper's batch query:\n  ${plan.join("\n  ")}\n`);
    const count = async () => Number((await bench.pool.query("SELECT count(*) FROM slots WHERE status = 'expired'")).rows[0].count);
    // A fired reminder's next firing is two days on.
    const firedCount = async () =>
      Number((await bench.pool.query("SELECT count(*) FROM slots WHERE alias = '@timer:0' AND status = 'open' AND deadline > now()")).rows[0].count);
    const m = await bench.measure();
    const s0 = performance.now();
    await bench.cluster.spawn("sweeper");
    let done = 0;
    let fired = 0;
    const cap = Date.now() + Math.max(120_000, (expired + timers) * 50);
    while (((done = await count()) < expired || (fired = await firedCount()) < timers) && Date.now() < cap) {
      await new Promise((r) => setTimeout(r, 500));
    }
    fired = await firedCount();
    const seconds = (performance.now() - s0) / 1000;
    const w = await m.stop();
    const cpu = Object.values(w.cpuMs).reduce((a, b) => a + b, 0);
    const sweeperStatements = w.counts.sqlByVerb.SELECT ?? 0;
    const handled = done + fired;
    const result = {
      expired,
      open,
      done,
      timers,
      fired,
      seconds,
      perSecond: handled / seconds,
      cpuMsPerExpiry: cpu / Math.max(1, handled),
      cpuMsByProcess: w.cpuMs,
      sqlPerExpiry: w.counts.sql / Math.max(1, handled),
      redisPerExpiry: w.counts.redis / Math.max(1, handled),
      sqlByVerb: w.counts.sqlByVerb,
      redisByName: w.counts.redisByName,
      plan,
    };
    process.stdout.write(
      `${done}/${expired} expired and ${fired}/${timers} timers fired in ${fmt(seconds)} s (${fmt(result.perSecond)}/s); per expiry: CPU ${fmt(result.cpuMsPerExpiry, 2)} ms, SQL ${fmt(result.sqlPerExpiry, 2)} ${JSON.stringify(w.counts.sqlByVerb)}, Redis ${fmt(result.redisPerExpiry, 2)}; SELECTs incl. the sweeper's batches ${sweeperStatements}\n`,
    );
    const note = loadNote(load0);
    process.stdout.write(`${note}\nwrote ${writeResult("sweep", { note, result })}\n`);
  } finally {
    await bench.stop();
  }
}

await main();
