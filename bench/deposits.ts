/**
 * Benchmark: callback deposits per second through the whole path — HTTP, body check, BullMQ,
 * a worker's transaction under the run lock, the answer back — against a real `slotflow serve`
 * on local PostgreSQL and Redis. Prints throughput and latency percentiles for one client and
 * for ten concurrent clients. Not a test: it prints its figures.
 *
 *   node --import=tsx bench/deposits.ts [runs=300]
 *
 * For comparison (measured on this kind of machine): n8n 2.8's Wait-node resume manages about 61
 * resumes/s with one client (p50 16 ms, p99 26 ms) and 86/s with ten (p99 150 ms).
 */
import { readFileSync } from "node:fs";
import { dropDatabase } from "../test/helpers/db.js";
import { ADMIN_TOKEN, eventually, printedLinks, request, startCluster } from "../test/helpers/server.js";

const RUNS = Number(process.argv[2] ?? 300);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function main() {
  const cluster = await startCluster("bench", { env: { SLOTFLOW_RATE_LIMIT_PER_MINUTE: "1000000" } });
  try {
    const src = readFileSync("examples/vendor-approval.flow", "utf8");
    await request(cluster.baseUrl, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: src });
    const start = async () =>
      request(cluster.baseUrl, "POST", "/api/workflows/VendorApproval/runs", {
        token: ADMIN_TOKEN,
        json: { vendor: { name: "Bench", contactEmail: "b@example.com" }, amount: 10 },
      });
    process.stdout.write(`starting ${2 * RUNS} runs…\n`);
    for (let i = 0; i < 2 * RUNS; i++) await start();
    const links = await eventually(async () => {
      const l = printedLinks(cluster.output());
      return l.length >= 2 * RUNS ? l : null;
    }, 120_000);
    const post = async (url: string) => {
      const t0 = performance.now();
      const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"ok":true,"note":"bench"}' });
      await res.text();
      if (res.status !== 200) throw new Error(`deposit answered ${res.status}`);
      return performance.now() - t0;
    };
    for (const [label, clients, batch] of [
      ["1 client", 1, links.slice(0, RUNS)],
      ["10 clients", 10, links.slice(RUNS, 2 * RUNS)],
    ] as const) {
      const latencies: number[] = [];
      const queue = [...batch];
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: clients }, async () => {
          for (let url = queue.shift(); url; url = queue.shift()) latencies.push(await post(url));
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      latencies.sort((a, b) => a - b);
      process.stdout.write(
        `${label}: ${(batch.length / seconds).toFixed(1)} deposits/s, p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms (${batch.length} deposits)\n`,
      );
    }
  } finally {
    await cluster.stop();
    await dropDatabase(cluster.databaseUrl);
  }
}

await main();
