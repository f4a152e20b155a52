/**
 * Issue 16 items 4 and 5, against real `slotflow serve` processes with NODE_ENV=production:
 *
 * - values sealed under one key (the development key, as in the issue) read by a process whose
 *   SLOTFLOW_SEAL_KEY lacks it: the responder gets 500 `configuration-fault` at once (not 503
 *   "cannot reach its queue" after seconds of retries), nothing is applied, retries add no
 *   identical incident, and adding the old key to the ring (docs/operations.md) recovers;
 * - `GET /metrics` on the public port needs the admin token in production; SLOTFLOW_METRICS_PORT
 *   serves it for a web process too.
 * Fixture: test/fixtures/callback-basic.flow.
 */
import test from "ava";
import { dropDatabase } from "../helpers/db.js";
import { deployFixture, postLink, showRun, slotStatus, startRun, uniqueTitle } from "../helpers/callback.js";
import { linkIn, waitForEmail } from "../helpers/mail.js";
import { ADMIN_TOKEN, freePort, request, startCluster, type Cluster } from "../helpers/server.js";

/** The development value of SLOTFLOW_SEAL_KEY (src/config.ts DEV_SEAL_KEY; docs/operations.md). */
const DEV_SEAL_KEY = "dev-seal-key-change-me";
const PRODUCTION = { NODE_ENV: "production", SLOTFLOW_ALLOW_VOLATILE_REDIS: "1" };

let cluster: Cluster;

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

test.serial("item 4: a production key that does not open values sealed under the development key answers 500 configuration-fault, piles up no incidents, and recovers once the old key is in the ring", async (t) => {
  // sealed under the development key: a process started without SLOTFLOW_SEAL_KEY outside production
  cluster = await startCluster("seal-fault", { env: { SLOTFLOW_SEAL_KEY: "" } });
  const base = cluster.baseUrl;
  await deployFixture(base, "callback-basic.flow");
  const title = uniqueTitle("seal-fault");
  const runId = await startRun(base, "CbBasic", { job: { title, contact: `${title}@example.test`, handled: 0 } });
  const url = linkIn(await waitForEmail(() => cluster.output(), `answer ${title}`));
  await cluster.stop();

  await cluster.spawn("serve", { env: { ...PRODUCTION, SLOTFLOW_SEAL_KEY: "a-production-key" } });
  for (let i = 0; i < 3; i++) {
    const res = await postLink(url, { ok: true, note: "x" }, { headers: { "idempotency-key": `k${i}` } });
    t.is(res.status, 500, res.text);
    t.is(res.body?.code, "configuration-fault", res.text);
    t.regex(res.body?.detail ?? "", /SLOTFLOW_SEAL_KEY/);
    t.notRegex(res.body?.detail ?? "", /cannot reach|retry it shortly/);
    t.regex(res.headers.get("content-type") ?? "", /^application\/problem\+json/);
  }
  const shown = await showRun(base, runId);
  t.is(slotStatus(shown, "answer"), "open", "nothing applied");
  const incidents = shown.incidents.filter((i: { code: string }) => i.code === "command-failed");
  t.is(incidents.length, 1, JSON.stringify(shown.incidents));
  t.regex(incidents[0].message, /configuration fault: no key of SLOTFLOW_SEAL_KEY opens/);
  t.false(cluster.output().some((l) => l.includes("a-production-key")), "the key never reaches a log");

  // the recovery path of docs/operations.md: add the old key to the ring (newest first), restart
  await cluster.stop();
  await cluster.spawn("serve", { env: { ...PRODUCTION, SLOTFLOW_SEAL_KEY: `a-production-key,${DEV_SEAL_KEY}` } });
  const ok = await postLink(url, { ok: true, note: "x" });
  t.is(ok.status, 200, ok.text);
  t.is(slotStatus(await showRun(base, runId), "answer"), "completed");
  await cluster.stop();
});

test.serial("item 5: in production /metrics on the public port needs the admin token, and SLOTFLOW_METRICS_PORT serves it for the web process", async (t) => {
  const metricsPort = await freePort();
  cluster.processes.length = 0;
  await cluster.spawn("serve", { env: { ...PRODUCTION, SLOTFLOW_SEAL_KEY: "a-production-key", SLOTFLOW_METRICS_PORT: String(metricsPort) } });
  const anon = await request(cluster.baseUrl, "GET", "/metrics");
  t.is(anon.status, 401, anon.text);
  t.is(anon.body?.code, "unauthorized");
  t.false(anon.text.includes("slotflow_"), "no metric leaks to an anonymous caller");
  const withToken = await request(cluster.baseUrl, "GET", "/metrics", { token: ADMIN_TOKEN });
  t.is(withToken.status, 200);
  t.regex(withToken.text, /^# HELP slotflow_/m);
  const priv = await request(`http://127.0.0.1:${metricsPort}`, "GET", "/metrics");
  t.is(priv.status, 200);
  t.regex(priv.text, /^# HELP slotflow_http_request_duration_seconds /m);
});
