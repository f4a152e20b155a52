/**
 * Benchmark `mint`: runs started per second through the admin API (`POST
 * /api/workflows/VendorApproval/runs`), each start minting one link and queuing one mail, which
 * the worker then delivers (terminal transport). At C = 1 and 10: starts/s, p50/p99 of the start
 * request, and — until every queued mail is delivered — CPU ms, SQL statements and Redis commands
 * per start over web, worker, PostgreSQL backends and redis-server. Writes bench/results/mint-*.json.
 *
 *   npm run bench -- mint [n1=200] [n10=1000] [--warm=3000]
 */
import { startBenchCluster } from "./lib/cluster.js";
import { loadNote, machineCpu } from "./lib/proc.js";
import { drive, fmt, post, writeResult, WARM_UP } from "./lib/report.js";
import { perDeposit } from "./deposits.js";
import { ADMIN_TOKEN } from "../test/helpers/server.js";

const [n1 = 200, n10 = 1000] = process.argv.slice(2).filter((a) => !a.startsWith("--")).map(Number);
const INPUT = JSON.stringify({ vendor: { name: "Bench", contactEmail: "bench@example.com" }, amount: 10 });

async function main() {
  const load0 = machineCpu();
  const bench = await startBenchCluster("bmint");
  const phases: Record<string, unknown> = {};
  try {
    await bench.deploy("examples/vendor-approval.flow");
    const start = () => post(`${bench.cluster.baseUrl}/api/workflows/VendorApproval/runs`, INPUT, { authorization: `Bearer ${ADMIN_TOKEN}` });
    await drive(Array.from({ length: WARM_UP }), 10, start); // warm-up (report.ts WARM_UP)
    const pending = async () => Number((await bench.pool.query("SELECT count(*) FROM outbox WHERE status = 'pending'")).rows[0].count);
    for (const [clients, n] of [
      [1, n1],
      [10, n10],
    ] as const) {
      while ((await pending()) > 0) await new Promise((r) => setTimeout(r, 100));
      const m = await bench.measure();
      const load = await drive(Array.from({ length: n }), clients, start);
      while ((await pending()) > 0) await new Promise((r) => setTimeout(r, 100));
      const f = perDeposit(load, await m.stop());
      phases[`C${clients}`] = f;
      process.stdout.write(
        `C=${clients}: ${fmt(f.perSecond)} starts/s, p50 ${fmt(f.p50Ms)} ms, p99 ${fmt(f.p99Ms)} ms; per start incl. mail delivery: CPU ${fmt(f.cpuMsPerDeposit, 2)} ms ${JSON.stringify(f.cpuMsByProcess)}, ` +
          `SQL ${fmt(f.sqlPerDeposit, 2)} ${JSON.stringify(f.sqlByVerb)}, Redis ${fmt(f.redisCommandsPerDeposit, 2)} ${JSON.stringify(f.redisByName)}, statuses ${JSON.stringify(f.statuses)}\n`,
      );
    }
    const note = loadNote(load0);
    process.stdout.write(`${note}\nwrote ${writeResult("mint", { note, phases })}\n`);
  } finally {
    await bench.stop();
  }
}

await main();
