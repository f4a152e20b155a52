/**
 * Limits of the callback endpoint set by the environment, over real HTTP against one
 * `slotflow serve` with SLOTFLOW_RATE_LIMIT_PER_MINUTE=5 and SLOTFLOW_CALLBACK_BODY_LIMIT_BYTES=1024.
 *
 * The rate limit counts callback requests per client address in a 60 s window, so the tests of
 * this file count their own requests from 127.0.0.1 and use 127.0.0.2 (also loopback) as a
 * second client.
 */
import test from "ava";
import { dropDatabase } from "../helpers/db.js";
import { deployFixture, portOf, postLink, rawRequest, showRun, slotStatus, startRun, uniqueTitle, type Answer } from "../helpers/callback.js";
import { linkIn, waitForEmail } from "../helpers/mail.js";
import { startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;
let base: string;
/** Callback requests sent from 127.0.0.1 so far in this file (the limiter's window is 60 s). */
let sent = 0;

test.before(async () => {
  cluster = await startCluster("cblimits", { env: { SLOTFLOW_RATE_LIMIT_PER_MINUTE: "5", SLOTFLOW_CALLBACK_BODY_LIMIT_BYTES: "1024" } });
  base = cluster.baseUrl;
  await deployFixture(base, "callback-basic.flow");
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

async function basic(prefix: string) {
  const title = uniqueTitle(prefix);
  const runId = await startRun(base, "CbBasic", { job: { title, contact: `${title}@example.test`, handled: 0 } });
  return {
    runId,
    link: async (alias: string) => linkIn(await waitForEmail(() => cluster.output(), `${alias} ${title}`)),
    show: () => showRun(base, runId),
  };
}

function post(url: string, body: string): Promise<Answer> {
  sent++;
  return postLink(url, undefined, { body, headers: { "content-type": "application/json" } });
}

test.serial("a body above SLOTFLOW_CALLBACK_BODY_LIMIT_BYTES is refused 413 payload-too-large and the link still works", async (t) => {
  const run = await basic("size");
  const url = await run.link("answer");
  const big = JSON.stringify({ ok: true, note: "x".repeat(2000) });
  t.true(Buffer.byteLength(big) > 1024);
  const res = await post(url, big);
  t.is(res.status, 413, res.text);
  t.is(res.body?.code, "payload-too-large");
  t.is((await run.show()).entities.job.handled, 0);
  const ok = await post(url, JSON.stringify({ ok: true, note: "x".repeat(900) }));
  t.is(ok.status, 200, ok.text);
  t.is((await run.show()).entities.job.note, "x".repeat(900));
});

test.serial("past SLOTFLOW_RATE_LIMIT_PER_MINUTE a client gets 429 rate-limited with Retry-After, spending nothing, while another client is still served", async (t) => {
  const run = await basic("rate");
  const url = await run.link("answer");
  const answers: Answer[] = [];
  while (sent < 5) answers.push(await post(url, JSON.stringify({ ok: "no", note: "wrong type" })));
  t.deepEqual(
    answers.map((a) => a.status),
    answers.map(() => 422),
    "within the budget each request is answered on its merits",
  );
  const limited = await post(url, JSON.stringify({ ok: true, note: "over the budget" }));
  t.is(limited.status, 429, limited.text);
  t.is(limited.body?.code, "rate-limited");
  t.regex(limited.headers.get("content-type") ?? "", /^application\/problem\+json/);
  const retryAfter = Number(limited.headers.get("retry-after"));
  t.true(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After: ${limited.headers.get("retry-after")}`);
  const again = await post(url, JSON.stringify({ ok: true, note: "still over" }));
  t.is(again.status, 429, "the budget does not refill at once");
  const shown = await run.show();
  t.is(shown.entities.job.handled, 0, "a limited request applied nothing");
  t.is(slotStatus(shown, "answer"), "open");

  // another client (a second loopback address) has its own budget, and the link is still live
  const path = new URL(url).pathname;
  const other = await rawRequest({
    port: portOf(base),
    method: "POST",
    path,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ok: true, note: "from another client" }),
    localAddress: "127.0.0.2",
  });
  t.is(other.status, 200, other.text);
  t.is((await run.show()).entities.job.note, "from another client");
});
