/**
 * Benchmark `memory`: peak resident memory (VmHWM) of the web and worker processes while they
 * serve deposits — after start-up, and after N deposits at C = 10 and 50 — plus the RSS at the end.
 * Writes bench/results/memory-*.json.
 *
 *   npm run bench -- memory [n=3000]
 */
import { startBenchCluster } from "./lib/cluster.js";
import { loadNote, machineCpu } from "./lib/proc.js";
import { drive, fmt, postDeposit, writeResult } from "./lib/report.js";

const n = Number(process.argv[2] ?? 3000);
const INPUT = { vendor: { name: "Bench", contactEmail: "bench@example.com" }, amount: 10 };

async function main() {
  const load0 = machineCpu();
  const bench = await startBenchCluster("bmemory");
  try {
    await bench.deploy("examples/vendor-approval.flow");
    const idle = bench.memory();
    const urls = await bench.seedRuns("VendorApproval", INPUT, n, "memory");
    const half = Math.floor(n / 2);
    const r10 = await drive(urls.slice(0, half), 10, (u) => postDeposit(u));
    const after10 = bench.memory();
    const r50 = await drive(urls.slice(half), 50, (u) => postDeposit(u));
    const after50 = bench.memory();
    const mib = (kb: number) => `${(kb / 1024).toFixed(0)} MiB`;
    for (const [label, m] of [
      ["idle", idle],
      [`after ${half} deposits at C=10 (${fmt(r10.perSecond)}/s)`, after10],
      [`after ${n - half} more at C=50 (${fmt(r50.perSecond)}/s)`, after50],
    ] as const) {
      process.stdout.write(`${label}: ${Object.entries(m).map(([k, v]) => `${k} peak ${mib(v.peakKb)} (rss ${mib(v.rssKb)})`).join(", ")}\n`);
    }
    const note = loadNote(load0);
    process.stdout.write(`${note}\nwrote ${writeResult("memory", { note, idle, after10, after50 })}\n`);
  } finally {
    await bench.stop();
  }
}

await main();
