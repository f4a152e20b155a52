/**
 * A web process whose Redis goes away answers 503 `unavailable` (with Retry-After) on every
 * endpoint that needs Redis — starting a run, the ordinary raise path, the callback link,
 * readiness — instead of never answering (issue 9 §3), and applies nothing: no run is created,
 * the slot stays open, the link stays live. Endpoints that need only PostgreSQL keep answering.
 * Each request carries an abort signal so a hang fails the test instead of stalling the suite.
 */
import test from "ava";
import { signPrincipal } from "../../src/auth/jwt.js";
import { deployFixture, startRun, uniqueTitle } from "../helpers/callback.js";
import { dropDatabase, sql } from "../helpers/db.js";
import { kill, spawnWithEnv, TcpProxy } from "../helpers/faults.js";
import { waitForEmail, linkIn } from "../helpers/mail.js";
import { ADMIN_TOKEN, freePort, JWT_SECRET, request, startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;
test.before(async () => {
  cluster = await startCluster("redisgone", { roles: ["serve"] });
  await deployFixture(cluster.baseUrl, "callback-basic.flow");
});
test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

/** A request that gives up (failing the test) rather than hang. */
const ask = (base: string, method: string, path: string, opts: Parameters<typeof request>[3] = {}) =>
  Promise.race([
    request(base, method, path, opts),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${method} ${path} did not answer`)), 30_000).unref()),
  ]);

test("every endpoint that needs Redis answers 503 unavailable once Redis is gone, and nothing is applied", async (t) => {
  const title = uniqueTitle("gone");
  const runId = await startRun(cluster.baseUrl, "CbBasic", { job: { title, contact: "gone@example.com", handled: 0 } });
  const link = linkIn(await waitForEmail(cluster.output, `answer ${title}`));

  const redisUrl = new URL(cluster.env.REDIS_URL!);
  const proxy = new TcpProxy(Number(redisUrl.port || 6379), redisUrl.hostname);
  const via = new URL(redisUrl.toString());
  via.hostname = "127.0.0.1";
  via.port = String(await proxy.start());
  const port = await freePort();
  const web = await spawnWithEnv(cluster, "web", { port, env: { REDIS_URL: via.toString() } });
  const base = `http://127.0.0.1:${port}`;
  try {
    t.is((await ask(base, "GET", "/readyz")).status, 200, "through the proxy, Redis answers at first");
    await proxy.cut();
    const runsBefore = await sql(cluster.databaseUrl, "SELECT count(*)::int AS n FROM runs");

    const started = await ask(base, "POST", "/api/workflows/CbBasic/runs", { token: ADMIN_TOKEN, json: { job: { title: uniqueTitle("no"), contact: "n@example.com", handled: 0 } } });
    const jwt = await signPrincipal(JWT_SECRET, { sub: "ops-1", roles: ["ops"] });
    const raised = await ask(base, "POST", `/api/runs/${runId}/slots/ping/events`, { token: jwt });
    const deposited = await ask(base, "POST", new URL(link).pathname, { json: { ok: true, note: "through the broken web" } });
    const ready = await ask(base, "GET", "/readyz");
    for (const [what, res] of [["start", started], ["raise", raised], ["callback", deposited]] as const) {
      t.is(res.status, 503, `${what}: ${res.text}`);
      t.is(res.body?.type?.endsWith("/unavailable"), true, `${what}: ${res.text}`);
      t.regex(res.headers.get("retry-after") ?? "", /^[1-9]\d*$/, what);
    }
    t.is(ready.status, 503);
    t.is(ready.body.redis, false);

    // Endpoints that need only PostgreSQL keep answering.
    t.is((await ask(base, "GET", `/api/runs/${runId}`, { token: ADMIN_TOKEN })).status, 200);

    // Nothing was applied: no new run, the slots still open, the link still live.
    t.deepEqual(await sql(cluster.databaseUrl, "SELECT count(*)::int AS n FROM runs"), runsBefore);
    const shown = await ask(cluster.baseUrl, "GET", `/api/runs/${runId}`, { token: ADMIN_TOKEN });
    t.is(shown.body.entities.job.handled, 0);
    t.is(shown.body.slots.find((s: { alias: string }) => s.alias === "ping").status, "open");
    const ok = await ask(cluster.baseUrl, "POST", new URL(link).pathname, { json: { ok: true, note: "through a healthy web" } });
    t.is(ok.status, 200, ok.text);
  } finally {
    await kill(web);
    await proxy.cut();
  }
});
