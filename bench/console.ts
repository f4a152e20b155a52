/**
 * Benchmark `console` (issue 28 items 2–3; issue 39 item 4): the timings test/e2e/console-bounds
 * used to assert ("within a second") and now leaves to this bench, on the same pages — against one
 * real `slotflow serve` (web, worker and sweeper in one process), as the test runs it:
 *
 *   - the page of a workflow of 300 states and 7,800 transitions (listed, not drawn);
 *   - the page of a run of it;
 *   - the page of a workflow whose two ~240 KB versions differ on every line (the diff gives up);
 *   - the same page once a third version changes one arm (a small diff shown).
 *
 * Each page is requested `--rounds=N` times (default 3; a new version before each round of the
 * diff pages, so no cached diff is reused) while `/healthz` is probed and `--deposits=N` callback
 * deposits (default 4) are made one after another (test/helpers/console-load.ts). Printed and
 * written to bench/results/console-*.json, per page: the page's ms, the slowest `/healthz` ms, the
 * deposits' ms (median and slowest), and how many deposits and probes completed while it rendered.
 *
 *   npm run bench -- console [--rounds=3] [--deposits=4]
 */
import { bigFlow } from "../test/helpers/big-flow.js";
import { startRun } from "../test/helpers/callback.js";
import { PING_FLOW, deployText, pingLinks, renderWhileServing, type Rendered } from "../test/helpers/console-load.js";
import { dropDatabase } from "../test/helpers/db.js";
import { startCluster } from "../test/helpers/server.js";
import { loadNote, machineCpu } from "./lib/proc.js";
import { fmt, percentile, writeResult } from "./lib/report.js";

const arg = (name: string, dflt: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt);
const ROUNDS = arg("rounds", 3);
const DEPOSITS = arg("deposits", 4);
const VIEWER_TOKEN = "bench-viewer-token";
const VIEWER = { authorization: `Basic ${Buffer.from(`vic:${VIEWER_TOKEN}`).toString("base64")}` };

interface Row {
  page: string;
  pageMs: number;
  slowestHealthzMs: number;
  depositMedianMs: number;
  depositSlowestMs: number;
  depositsDuringRender: number;
  probesDuringRender: number;
  probes: number;
}

function row(page: string, r: Rendered): Row {
  const deposits = r.deposits.map((d) => d.ms).sort((a, b) => a - b);
  return {
    page,
    pageMs: Math.round(r.ms),
    slowestHealthzMs: Math.round(Math.max(0, ...r.probes.map((p) => p.ms))),
    depositMedianMs: Math.round(percentile(deposits, 50)),
    depositSlowestMs: Math.round(deposits.at(-1) ?? 0),
    depositsDuringRender: r.deposits.filter((d) => d.duringRender).length,
    probesDuringRender: r.probes.filter((p) => p.duringRender).length,
    probes: r.probes.length,
  };
}

async function main() {
  const load0 = machineCpu();
  const cluster = await startCluster("bconsole", { env: { SLOTFLOW_VIEWER_TOKEN: VIEWER_TOKEN } });
  const base = cluster.baseUrl;
  const rows: Row[] = [];
  try {
    await deployText(base, PING_FLOW);
    await deployText(base, bigFlow("BigGraph", 300, 25));
    const runId = await startRun(base, "BigGraph", { who: "bench" });
    for (let round = 0; round < ROUNDS; round++) {
      rows.push(row("workflow page, 300 states", await renderWhileServing(base, "/console/workflows/BigGraph", VIEWER, await pingLinks(cluster, DEPOSITS))));
      rows.push(row("run page, 300 states", await renderWhileServing(base, `/console/runs/${runId}`, VIEWER, await pingLinks(cluster, DEPOSITS))));
      // a fresh pair of versions each round: the diff is never cached
      const name = `BigDiff${round}`;
      const v2 = bigFlow(name, 3, 2600, "m", (i, k) => (i + k) % 3);
      await deployText(base, bigFlow(name, 3, 2600, "n", (i, k) => (i + k) % 3));
      await deployText(base, v2);
      rows.push(row("diff page, gives up", await renderWhileServing(base, `/console/workflows/${name}`, VIEWER, await pingLinks(cluster, DEPOSITS))));
      await deployText(base, v2.replace("when (m == 5) -> S0", "when (m == 5) -> S2"));
      rows.push(row("diff page, one arm", await renderWhileServing(base, `/console/workflows/${name}`, VIEWER, await pingLinks(cluster, DEPOSITS))));
    }
  } finally {
    await cluster.stop();
    await dropDatabase(cluster.databaseUrl);
  }
  const note = loadNote(load0);
  process.stdout.write(`console pages under traffic (${ROUNDS} rounds, ${DEPOSITS} deposits each; ${note})\n`);
  process.stdout.write("page | page ms | slowest /healthz ms | deposit p50 / max ms | deposits / probes done while rendering\n");
  for (const r of rows) process.stdout.write(`${r.page} | ${r.pageMs} | ${r.slowestHealthzMs} | ${fmt(r.depositMedianMs, 0)} / ${r.depositSlowestMs} | ${r.depositsDuringRender}/${DEPOSITS}, ${r.probesDuringRender}/${r.probes}\n`);
  process.stdout.write(`${writeResult("console", { rounds: ROUNDS, deposits: DEPOSITS, load: note, rows })}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
