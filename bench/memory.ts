/**
 * Benchmark `memory`: peak resident memory (VmHWM) of the web and worker processes while they
 * serve deposits — just after the deploy, idle once the compiler thread has ended (where the
 * peaks are reset), and after N deposits at C = 10 and 50 — plus the RSS at each point.
 * SLOTFLOW_RUN_BUILT=1 runs the built package (dist/, `npm run build` first) instead of the
 * sources through tsx, as production does.
 * Writes bench/results/memory-*.json.
 *
 *   npm run bench -- memory [n=3000]
 */
import { startBenchCluster } from "./lib/cluster.js";
import { loadNote, machineCpu } from "./lib/proc.js";
import { drive, fmt, postDeposit, writeResult } from "./lib/report.js";
import { IDLE_MS } from "../src/lang/compile-async.js";

const n = Number(process.argv[2] ?? 3000);
const INPUT = { vendor: { name: "Bench", contactEmail: "bench@example.com" }, amount: 10 };

async function main() {
  const load0 = machineCpu();
  const bench = await startBenchCluster("bmemory");
  try {
    await bench.deploy("examples/vendor-approval.flow");
    const deployed = Date.now();
    const atDeploy = bench.memory();
    const urls = await bench.seedRuns("VendorApproval", INPUT, n, "memory");
    // The web's compiler thread ends IDLE_MS after the deploy's compile (lang/compile-async.ts);
    // the peaks after this point are those of serving deposits (issue 22 item 3).
    await new Promise((r) => setTimeout(r, Math.max(0, deployed + IDLE_MS + 1000 - Date.now())));
    const idle = bench.memory();
    bench.resetPeakMemory();
    const half = Math.floor(n / 2);
    const r10 = await drive(urls.slice(0, half), 10, (u) => postDeposit(u));
    const after10 = bench.memory();
    const r50 = await drive(urls.slice(half), 50, (u) => postDeposit(u));
    const after50 = bench.memory();
    const mib = (kb: number) => `${(kb / 1024).toFixed(0)} MiB`;
    for (const [label, m] of [
      ["just after the deploy", atDeploy],
      ["idle (peaks reset here)", idle],
      [`after ${half} deposits at C=10 (${fmt(r10.perSecond)}/s)`, after10],
      [`after ${n - half} more at C=50 (${fmt(r50.perSecond)}/s)`, after50],
    ] as const) {
      process.stdout.write(`${label}: ${Object.entries(m).map(([k, v]) => `${k} peak ${mib(v.peakKb)} (rss ${mib(v.rssKb)})`).join(", ")}\n`);
    }
    const note = loadNote(load0);
    process.stdout.write(`${note}\nwrote ${writeResult("memory", { note, built: process.env.SLOTFLOW_RUN_BUILT === "1", nodeOptions: process.env.NODE_OPTIONS ?? "", atDeploy, idle, after10, after50 })}\n`);
  } finally {
    await bench.stop();
  }
}

await main();
