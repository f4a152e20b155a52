/**
 * The console's heavy pages do not stall the server (issue 28 items 2 and 3), against one real
 * `slotflow serve` (web, worker and sweeper in one process, as the issue found it):
 *
 * - item 2: a valid workflow of 300 states and 7,800 transitions (generated here, ~230 KB) opened
 *   by a viewer at `/console/workflows/{name}` used to be laid out by ELK on the web process's
 *   event loop — `/healthz` stalled for over a minute and the process died out of heap. Now its
 *   page answers with the states and transitions listed ("too large to draw"), and meanwhile
 *   `/healthz` and callback deposits keep completing; the run page of such a workflow too; the
 *   process stays up.
 * - item 3: the diff between two ~240 KB versions that differ on every line used to run
 *   synchronously (40 s). Now it runs off the event loop, bounded, and the page says the versions
 *   differ too much to diff, linking both sources; `/healthz` and deposits keep completing.
 *
 * Liveness, not a stopwatch (issue 39 item 4): while a heavy page renders, more than one deposit
 * and more than one `/healthz` probe complete before the page answers — a render that held the
 * event loop would let none through until it answered. No millisecond figure is asserted (the
 * timings are printed by `npm run bench -- console`, bench/console.ts).
 */
import test, { type ExecutionContext } from "ava";
import { bigFlow } from "../helpers/big-flow.js";
import { startRun } from "../helpers/callback.js";
import { PING_FLOW, deployText, pingLinks, renderWhileServing } from "../helpers/console-load.js";
import { dropDatabase } from "../helpers/db.js";
import { request, startCluster, type Cluster } from "../helpers/server.js";

const VIEWER_TOKEN = "test-viewer-token";
const VIEWER = { authorization: `Basic ${Buffer.from(`vic:${VIEWER_TOKEN}`).toString("base64")}` };
let cluster: Cluster;
let base: string;

const deploy = (text: string) => deployText(base, text);

/** Deposits made beside a heavy page; more than HEAVY_MIN of them (and of the probes) must complete while it renders. */
const HEAVY_LINKS = 4;
const HEAVY_MIN = 1;

/**
 * Requests the console page `path` while probing `/healthz` and depositing through `links`
 * (test/helpers/console-load.ts). Asserts every probe and every deposit answered 200 and, when
 * `heavy`, that more than HEAVY_MIN of each completed while the page was still rendering.
 * Returns the page.
 */
async function whileRendering(t: ExecutionContext, path: string, links: string[], heavy: boolean): Promise<{ status: number; text: string }> {
  const r = await renderWhileServing(base, path, VIEWER, links);
  for (const d of r.deposits) t.is(d.status, 200, d.text);
  t.is(r.deposits.length, links.length);
  t.true(r.probes.length > 0);
  for (const p of r.probes) t.is(p.status, 200, `/healthz answered ${p.status} while ${path} rendered: ${p.text}`);
  const deposited = r.deposits.filter((d) => d.duringRender).length;
  const probed = r.probes.filter((p) => p.duringRender).length;
  if (heavy) {
    t.true(deposited > HEAVY_MIN, `${deposited} of ${links.length} deposits completed while ${path} rendered`);
    t.true(probed > HEAVY_MIN, `${probed} /healthz probes completed while ${path} rendered`);
  }
  t.log(`${path}: ${deposited} of ${links.length} deposits and ${probed} of ${r.probes.length} probes completed while it rendered`);
  return { status: r.status, text: r.text };
}

async function stillUp(t: ExecutionContext): Promise<void> {
  t.is(cluster.processes[0].child.exitCode, null, "the serve process is still running");
  t.is((await request(base, "GET", "/healthz")).status, 200);
}

test.before(async () => {
  cluster = await startCluster("console_bounds", { env: { SLOTFLOW_VIEWER_TOKEN: VIEWER_TOKEN } });
  base = cluster.baseUrl;
  await deploy(PING_FLOW);
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

test.serial("item 2: the page of a workflow of 300 states and 7,800 transitions lists them instead of drawing them; /healthz and deposits keep completing meanwhile; the process stays up", async (t) => {
  t.timeout(240_000);
  const source = bigFlow("BigGraph", 300, 25);
  t.true(source.length > 200_000);
  await deploy(source);
  const page = await whileRendering(t, "/console/workflows/BigGraph", await pingLinks(cluster, HEAVY_LINKS), true);
  t.is(page.status, 200, page.text.slice(0, 500));
  t.regex(page.text, /too large to draw/);
  t.regex(page.text, /301 states and 7,800 transitions/);
  t.notRegex(page.text, /<svg/, "no drawing");
  t.regex(page.text, /<th scope="row"[^>]*>▶ S0<\/th>/, "each state is listed, the initial one marked");
  t.regex(page.text, /S299/);
  await stillUp(t);

  // A run of that workflow: its page lists the states too, the current one marked.
  const runId = await startRun(base, "BigGraph", { who: "x" });
  const runPage = await whileRendering(t, `/console/runs/${runId}`, await pingLinks(cluster, 1), false);
  t.is(runPage.status, 200);
  t.regex(runPage.text, /too large to draw/);
  t.regex(runPage.text, /<tr class="current"><th scope="row"[^>]*>▶ S0<\/th>/);
  await stillUp(t);
});

test.serial("item 3: the diff of two ~240 KB versions that differ on every line gives up, off the event loop; the page says so and links both sources; /healthz and deposits keep completing meanwhile", async (t) => {
  t.timeout(240_000);
  // Three states, thousands of arms each: a small graph (arms to the same state are one
  // transition), a large source.
  const v1 = bigFlow("BigDiff", 3, 2600, "n", (i, k) => (i + k) % 3);
  const v2 = bigFlow("BigDiff", 3, 2600, "m", (i, k) => (i + k) % 3);
  t.true(v1.length > 200_000 && v2.length > 200_000);
  await deploy(v1);
  await deploy(v2);
  const page = await whileRendering(t, "/console/workflows/BigDiff", await pingLinks(cluster, HEAVY_LINKS), true);
  t.is(page.status, 200, page.text.slice(0, 500));
  t.regex(page.text, /The versions differ too much to diff here/);
  t.regex(page.text, /href="\/console\/workflows\/BigDiff\?version=1"/);
  t.regex(page.text, /href="\/console\/workflows\/BigDiff\?version=2"/);
  t.regex(page.text, /<svg/, "the small graph is still drawn");
  await stillUp(t);

  // A diff that stays within the bounds is shown: one arm changed.
  await deploy(v2.replace("when (m == 5) -> S0", "when (m == 5) -> S2"));
  const small = await whileRendering(t, "/console/workflows/BigDiff", await pingLinks(cluster, HEAVY_LINKS), true);
  t.is(small.status, 200);
  t.regex(small.text, /<span class="del">- {4}when \(m == 5\) -&gt; S0<\/span>/);
  t.regex(small.text, /<span class="add">\+ {4}when \(m == 5\) -&gt; S2<\/span>/);
  await stillUp(t);
});
