/**
 * The console's heavy pages do not stall the server (issue 28 items 2 and 3), against one real
 * `slotflow serve` (web, worker and sweeper in one process, as the issue found it):
 *
 * - item 2: a valid workflow of 300 states and 7,800 transitions (generated here, ~230 KB) opened
 *   by a viewer at `/console/workflows/{name}` used to be laid out by ELK on the web process's
 *   event loop — `/healthz` stalled for over a minute and the process died out of heap. Now its
 *   page answers with the states and transitions listed ("too large to draw"), and meanwhile
 *   `/healthz` and a callback deposit each answer within a second; the run page of such a
 *   workflow too; the process stays up.
 * - item 3: the diff between two ~240 KB versions that differ on every line used to run
 *   synchronously (40 s). Now it runs off the event loop, bounded, and the page says the versions
 *   differ too much to diff, linking both sources; `/healthz` and a deposit answer within a second.
 */
import test, { type ExecutionContext } from "ava";
import { bigFlow } from "../helpers/big-flow.js";
import { startRun, uniqueTitle } from "../helpers/callback.js";
import { dropDatabase } from "../helpers/db.js";
import { linkIn, waitForEmail } from "../helpers/mail.js";
import { ADMIN_TOKEN, request, startCluster, type Cluster } from "../helpers/server.js";

const VIEWER_TOKEN = "test-viewer-token";
const VIEWER = { authorization: `Basic ${Buffer.from(`vic:${VIEWER_TOKEN}`).toString("base64")}` };
let cluster: Cluster;
let base: string;

const PING = `workflow Ping(job: Job)

entity Job {
  title: string
  contact: string
}

event Pong(ok: bool)

initial state Waiting {
  subscribe Pong(ok) as pong
  enter {
    send email to job.contact { subject: "ping " + job.title, body: "Answer: " + pong.CallbackUrl() }
  }
  on pong(ok) -> Done
}

terminal state Done
`;

async function deploy(text: string): Promise<void> {
  const res = await request(base, "POST", "/api/workflows", { token: ADMIN_TOKEN, text });
  if (res.status !== 201) throw new Error(`deploy answered ${res.status}: ${res.text}`);
}

/** A Ping run's callback link (a deposit to it answers once). */
async function pingLink(): Promise<string> {
  const title = uniqueTitle("bounds");
  await startRun(base, "Ping", { job: { title, contact: "x@example.test" } });
  return linkIn(await waitForEmail(() => cluster.output(), `ping ${title}`));
}

const timed = async <T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> => {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
};

/**
 * Requests the console page `path` and, while it is being rendered, probes `/healthz` every 100 ms
 * and posts a deposit to each of `links` (spread over the first seconds). Asserts every probe and
 * every deposit answered within a second, and returns the page.
 */
async function whileRendering(t: ExecutionContext, path: string, links: string[]): Promise<{ status: number; text: string; ms: number }> {
  let done = false;
  const page = timed(async () => {
    try {
      const res = await fetch(new URL(path, base), { headers: VIEWER, signal: AbortSignal.timeout(40_000) });
      return { status: res.status, text: await res.text() };
    } finally {
      done = true;
    }
  }).then(
    (r) => r,
    (err: Error) => err,
  );
  const probes: number[] = [];
  const probing = (async () => {
    do {
      const { ms, value } = await timed(() =>
        fetch(new URL("/healthz", base), { signal: AbortSignal.timeout(5_000) }).then(
          (r) => r.status,
          () => 0,
        ),
      );
      probes.push(ms);
      t.is(value, 200, "/healthz did not answer within 5 s");
      if (!value) break;
      await new Promise((r) => setTimeout(r, 100));
    } while (!done);
  })();
  const deposits = links.map(async (url, i) => {
    await new Promise((r) => setTimeout(r, 150 + i * 700));
    return timed(() =>
      fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ok: true }), signal: AbortSignal.timeout(5_000) }).then(
        async (r) => ({ status: r.status, text: await r.text() }),
        () => ({ status: 0, text: "no answer within 5 s" }),
      ),
    );
  });
  const answers = await Promise.all(deposits);
  await probing;
  const answered = await page;
  if (answered instanceof Error) throw new Error(`${path} did not answer: ${answered.message}`);
  const { ms, value } = answered;
  for (const a of answers) {
    t.is(a.value.status, 200, a.value.text);
    t.true(a.ms < 1000, `a callback deposit took ${Math.round(a.ms)} ms while ${path} rendered`);
  }
  t.true(probes.length > 0);
  const slowest = Math.max(...probes);
  t.true(slowest < 1000, `/healthz took up to ${Math.round(slowest)} ms while ${path} rendered (${probes.length} probes)`);
  t.log(`${path}: ${Math.round(ms)} ms; slowest /healthz ${Math.round(slowest)} ms of ${probes.length}; deposits ${answers.map((a) => Math.round(a.ms)).join(", ")} ms`);
  return { ...value, ms };
}

async function stillUp(t: ExecutionContext): Promise<void> {
  t.is(cluster.processes[0].child.exitCode, null, "the serve process is still running");
  t.is((await request(base, "GET", "/healthz")).status, 200);
}

test.before(async () => {
  cluster = await startCluster("console_bounds", { env: { SLOTFLOW_VIEWER_TOKEN: VIEWER_TOKEN } });
  base = cluster.baseUrl;
  await deploy(PING);
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

test.serial("item 2: the page of a workflow of 300 states and 7,800 transitions lists them instead of drawing them; /healthz and a deposit answer within a second meanwhile; the process stays up", async (t) => {
  t.timeout(240_000);
  const source = bigFlow("BigGraph", 300, 25);
  t.true(source.length > 200_000);
  await deploy(source);
  const links = [await pingLink(), await pingLink()];
  const page = await whileRendering(t, "/console/workflows/BigGraph", links);
  t.is(page.status, 200, page.text.slice(0, 500));
  t.regex(page.text, /too large to draw/);
  t.regex(page.text, /301 states and 7,800 transitions/);
  t.notRegex(page.text, /<svg/, "no drawing");
  t.regex(page.text, /<th scope="row"[^>]*>▶ S0<\/th>/, "each state is listed, the initial one marked");
  t.regex(page.text, /S299/);
  await stillUp(t);

  // A run of that workflow: its page lists the states too, the current one marked.
  const runId = await startRun(base, "BigGraph", { who: "x" });
  const runPage = await whileRendering(t, `/console/runs/${runId}`, [await pingLink()]);
  t.is(runPage.status, 200);
  t.regex(runPage.text, /too large to draw/);
  t.regex(runPage.text, /<tr class="current"><th scope="row"[^>]*>▶ S0<\/th>/);
  await stillUp(t);
});

test.serial("item 3: the diff of two ~240 KB versions that differ on every line gives up, off the event loop; the page says so and links both sources; /healthz and a deposit answer within a second meanwhile", async (t) => {
  t.timeout(240_000);
  // Three states, thousands of arms each: a small graph (arms to the same state are one
  // transition), a large source.
  const v1 = bigFlow("BigDiff", 3, 2600, "n", (i, k) => (i + k) % 3);
  const v2 = bigFlow("BigDiff", 3, 2600, "m", (i, k) => (i + k) % 3);
  t.true(v1.length > 200_000 && v2.length > 200_000);
  await deploy(v1);
  await deploy(v2);
  const links = [await pingLink(), await pingLink()];
  const page = await whileRendering(t, "/console/workflows/BigDiff", links);
  t.is(page.status, 200, page.text.slice(0, 500));
  t.regex(page.text, /The versions differ too much to diff here/);
  t.regex(page.text, /href="\/console\/workflows\/BigDiff\?version=1"/);
  t.regex(page.text, /href="\/console\/workflows\/BigDiff\?version=2"/);
  t.regex(page.text, /<svg/, "the small graph is still drawn");
  await stillUp(t);

  // A diff that stays within the bounds is shown: one arm changed.
  await deploy(v2.replace("when (m == 5) -> S0", "when (m == 5) -> S2"));
  const small = await whileRendering(t, "/console/workflows/BigDiff", [await pingLink()]);
  t.is(small.status, 200);
  t.regex(small.text, /<span class="del">- {4}when \(m == 5\) -&gt; S0<\/span>/);
  t.regex(small.text, /<span class="add">\+ {4}when \(m == 5\) -&gt; S2<\/span>/);
  await stillUp(t);
});
