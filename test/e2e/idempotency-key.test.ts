/**
 * `Idempotency-Key` on the callback endpoint (HTTP API "Idempotent retries"): a responder who lost
 * the answer to their POST (dropped connection, 202, 503) retries with the same key and learns the
 * outcome of their own first request instead of `410 link-burned`.
 *
 * Real `slotflow web` and `slotflow worker` processes on real PostgreSQL and Redis; the worker is
 * started late in one test so the first answer is a 202 that the retry then resolves.
 */
import test from "ava";
import { createHash, randomBytes } from "node:crypto";
import { dropDatabase, sql } from "../helpers/db.js";
import { deployFixture, eventsOn, postLink, showRun, startRun, uniqueTitle, type Answer } from "../helpers/callback.js";
import { linkIn, tokenOf, waitForEmail } from "../helpers/mail.js";
import { freePort, startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;
let base: string;

test.before(async () => {
  cluster = await startCluster("idemkey", { roles: ["web", "worker", "sweeper"] });
  base = cluster.baseUrl;
  await deployFixture(base, "callback-basic.flow");
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

async function basicRun(prefix: string) {
  const title = uniqueTitle(prefix);
  const runId = await startRun(base, "CbBasic", { job: { title, contact: `${title}@example.test`, handled: 0 } });
  const link = async (alias: string) => linkIn(await waitForEmail(() => cluster.output(), `${alias} ${title}`));
  return { runId, link };
}

function problem(t: import("ava").ExecutionContext, res: Answer, status: number, code: string): void {
  t.is(res.status, status, res.text);
  t.is(res.body?.code, code, res.text);
  t.regex(res.headers.get("content-type") ?? "", /^application\/problem\+json/);
}

const key = () => `retry-${randomBytes(8).toString("hex")}`;

test.serial("a retry with the same Idempotency-Key and body gets 200 completed, not 410; the slot completed once", async (t) => {
  const { runId, link } = await basicRun("idem-same");
  const url = await link("answer");
  const k = key();
  const first = await postLink(url, { ok: true, note: "first" }, { headers: { "idempotency-key": k } });
  t.is(first.status, 200, first.text);
  t.is(first.body?.status, "completed");
  const receipt = (first.body as { receipt?: string }).receipt;
  t.regex(String(receipt), /^[\w-]+\.[\w-]+\.[\w-]+$/, "v0.4: a completion carries its receipt");
  // The same body in another key order and spacing is the same body.
  const again = await postLink(url, undefined, { body: '{ "note": "first",  "ok": true }', headers: { "idempotency-key": k, "content-type": "application/json" } });
  t.is(again.status, 200, again.text);
  t.deepEqual(again.body, { status: "completed", receipt }, "the same receipt again");
  const run = await showRun(base, runId);
  t.is(eventsOn(run, "answer").length, 1);
  t.is(run.entities.job.handled, 1);
});

test.serial("the same key with a different body is 422 idempotency-key-reused and changes nothing", async (t) => {
  const { runId, link } = await basicRun("idem-diff");
  const url = await link("answer");
  const k = key();
  t.is((await postLink(url, { ok: true, note: "mine" }, { headers: { "idempotency-key": k } })).status, 200);
  const before = await showRun(base, runId);
  problem(t, await postLink(url, { ok: false, note: "mine" }, { headers: { "idempotency-key": k } }), 422, "idempotency-key-reused");
  t.deepEqual(await showRun(base, runId), before);
});

test.serial("another key, or none, still gets 410 link-burned: a key never lets a second party in", async (t) => {
  const { link } = await basicRun("idem-other");
  const url = await link("answer");
  t.is((await postLink(url, { ok: true, note: "a" }, { headers: { "idempotency-key": key() } })).status, 200);
  problem(t, await postLink(url, { ok: true, note: "a" }, { headers: { "idempotency-key": key() } }), 410, "link-burned");
  problem(t, await postLink(url, { ok: true, note: "a" }), 410, "link-burned");
});

test.serial("a malformed Idempotency-Key is refused 400 invalid-idempotency-key and the link stays live", async (t) => {
  const { link } = await basicRun("idem-bad");
  const url = await link("answer");
  for (const bad of ["", "x".repeat(256), "caf\u00e9", "tab\there"]) {
    // fetch refuses some header values itself; send those raw.
    const res = await postLink(url, { ok: true, note: "n" }, { headers: { "idempotency-key": bad } }).catch(() => null);
    if (res === null) continue;
    problem(t, res, 400, "invalid-idempotency-key");
  }
  t.is((await postLink(url, { ok: true, note: "n" })).status, 200);
});

test.serial("only the key's hash is stored: the key is in no row", async (t) => {
  const { link } = await basicRun("idem-hash");
  const url = await link("answer");
  const k = key();
  t.is((await postLink(url, { ok: true, note: "h" }, { headers: { "idempotency-key": k } })).status, 200);
  const tokenHash = createHash("sha256").update(tokenOf(url)).digest("hex");
  const rows = await sql<{ idempotency_key_sha256: string }>(cluster.databaseUrl, "SELECT idempotency_key_sha256 FROM links WHERE token_sha256 = $1", [tokenHash]);
  t.is(rows[0]?.idempotency_key_sha256, createHash("sha256").update(k).digest("hex"));
  const hits = await sql(cluster.databaseUrl, "SELECT 1 FROM links l, runs r, history h WHERE l::text LIKE $1 OR r::text LIKE $1 OR h::text LIKE $1 LIMIT 1", [`%${k}%`]);
  t.is(hits.length, 0);
});

test.serial("a 202 answer is resolved by retrying with the same key: pending first, then 200 once applied", async (t) => {
  // A second web process without a worker of its own is not enough (the cluster's worker would
  // take the job); stop the workers, post, then start one again.
  const { runId, link } = await basicRun("idem-202");
  const url = await link("answer");
  // A second web process that waits only 500 ms for an outcome answers 202 while no worker runs.
  const port = await freePort();
  await cluster.spawn("web", { port, env: { SLOTFLOW_DEPOSIT_WAIT_MS: "500" } });
  const origin = `http://127.0.0.1:${port}`;
  const workers = cluster.processes.filter((p) => p.role === "worker");
  await Promise.all(workers.map((w) => w.stop()));
  cluster.processes.splice(0, cluster.processes.length, ...cluster.processes.filter((p) => p.role !== "worker"));
  const k = key();
  const first = await postLink(url, { ok: true, note: "late" }, { origin, headers: { "idempotency-key": k } });
  t.is(first.status, 202, first.text);
  t.deepEqual(first.body, { status: "accepted" });
  const pending = await postLink(url, { ok: true, note: "late" }, { origin, headers: { "idempotency-key": k } });
  t.is(pending.status, 202, pending.text);
  await cluster.spawn("worker");
  const learned = await postLink(url, { ok: true, note: "late" }, { headers: { "idempotency-key": k } });
  t.is(learned.status, 200, learned.text);
  t.like(learned.body, { status: "completed" });
  t.regex(String((learned.body as { receipt?: string }).receipt), /^[\w-]+\.[\w-]+\.[\w-]+$/);
  const run = await showRun(base, runId);
  t.is(eventsOn(run, "answer").length, 1, "both queued deposits applied as one");
  t.is(run.entities.job.handled, 1);
});
