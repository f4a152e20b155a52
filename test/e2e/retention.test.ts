/**
 * Retention through the real processes (issue 20 item 1): web, worker and then sweeper processes
 * with SLOTFLOW_RETENTION=24h; the sweeper purges a run that ended two days ago within seconds, its link
 * then answers 404 `link-not-found` over HTTP, `/metrics` counts the rows purged and shows no lag,
 * and the running run is untouched. The CLI: `slotflow purge --dry-run` says what would go and
 * deletes nothing; a retention under 24 h is refused at start in one line.
 */
import test from "ava";
import { spawn } from "node:child_process";
import { deployFixture, postLink, startRun, uniqueTitle } from "../helpers/callback.js";
import { dropDatabase, sql } from "../helpers/db.js";
import { linkIn, waitForEmail } from "../helpers/mail.js";
import { ADMIN_TOKEN, eventually, freePort, request, ROOT, startCluster, type Cluster } from "../helpers/server.js";
import { cliEntry } from "../helpers/cli-entry.js";

let cluster: Cluster;

test.before(async () => {
  cluster = await startCluster("retention", { roles: ["web", "worker"], env: { SLOTFLOW_RETENTION: "24h" } });
  await deployFixture(cluster.baseUrl, "callback-basic.flow");
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl).catch(() => undefined);
});

/** Runs the CLI from the sources with `env` over the cluster's; resolves its exit code and output. */
function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [...cliEntry(), ...args], { cwd: ROOT, env: { ...cluster.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString("utf8")));
  child.stderr.on("data", (c: Buffer) => (err += c.toString("utf8")));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, out, err })));
}

/** Starts a run of CbBasic and returns its id and the link of its `answer` slot (from the printed mail). */
async function runWithLink(): Promise<{ id: string; link: string }> {
  const title = uniqueTitle("ret");
  const id = await startRun(cluster.baseUrl, "CbBasic", { job: { title, contact: `${title}@example.test`, handled: 0 } });
  const link = linkIn(await waitForEmail(() => cluster.output(), `answer ${title}`));
  return { id, link };
}

const count = async (q: string, values: unknown[] = []) => Number((await sql<{ n: string }>(cluster.databaseUrl, q, values))[0]!.n);

test.serial("the sweeper purges a run ended longer ago than SLOTFLOW_RETENTION; its link is then not found; metrics count it", async (t) => {
  t.timeout(120_000);
  const ended = await runWithLink();
  const running = await runWithLink();
  const cancel = await request(cluster.baseUrl, "POST", `/api/runs/${ended.id}/cancel`, { token: ADMIN_TOKEN, json: { reason: "test of retention" } });
  t.is(cancel.status, 200, cancel.text);
  t.is((await postLink(ended.link, { ok: true, note: "late" })).status, 410, "an ended run's link is dead");

  // the CLI's dry run, before the run is due: nothing would go
  const early = await cli(["purge", "--dry-run"]);
  t.is(early.code, 0, early.err);
  t.regex(early.out, /would delete:\n\s+runs\s+0\n/);

  await sql(cluster.databaseUrl, "UPDATE runs SET finished_at = now() - interval '2 days' WHERE id = $1", [ended.id]);
  const dry = await cli(["purge", "--dry-run"]);
  t.is(dry.code, 0, dry.err);
  t.regex(dry.out, /^purge --dry-run: runs ended before \S+ \(SLOTFLOW_RETENTION\); would delete:\n\s+runs\s+1\n\s+slots\s+4\n\s+links\s+3\n/);

  // a sweeper process starts (sweeps every 200 ms; purges at once, then at most every 10 s) and deletes it
  const sweeperMetricsPort = await freePort();
  await cluster.spawn("sweeper", { env: { SLOTFLOW_METRICS_PORT: String(sweeperMetricsPort) } });
  await eventually(async () => (await count("SELECT count(*) AS n FROM runs WHERE id = $1", [ended.id])) === 0, 30_000);
  for (const table of ["slots", "links", "entity_rows", "history", "outbox", "applied_commands"]) {
    t.is(await count(`SELECT count(*) AS n FROM ${table} WHERE run_id = $1`, [ended.id]), 0, `no ${table} row of the purged run is left`);
  }
  t.true((await count("SELECT count(*) AS n FROM slots WHERE run_id = $1", [running.id])) > 0, "the running run keeps its rows");

  const gone = await postLink(ended.link, { ok: true, note: "late" });
  t.is(gone.status, 404);
  t.is(gone.body?.type, "https://slotflow.dev/problems/link-not-found");
  t.is((await request(cluster.baseUrl, "GET", `/api/runs/${ended.id}`, { token: ADMIN_TOKEN })).status, 404);
  t.is((await postLink(running.link, { ok: true, note: "fine" })).status, 200, "the running run's link still works");

  // the rows purged are counted by the sweeper (its own metrics port); the lag is read from the
  // database by any process
  const counted = (await request(`http://127.0.0.1:${sweeperMetricsPort}`, "GET", "/metrics")).text;
  t.regex(counted, /^slotflow_purged_rows_total\{table="runs"\} 1$/m);
  t.regex(counted, /^slotflow_purged_rows_total\{table="slots"\} 4$/m);
  t.regex((await request(cluster.baseUrl, "GET", "/metrics")).text, /^slotflow_purge_lag_seconds 0$/m);
  t.true(cluster.output().some((l) => l.includes('"msg":"retention purge"')), "the purge is logged");
});

test.serial("a retention under the 24 h Idempotency-Key promise is refused at start in one line", async (t) => {
  const r = await cli(["purge", "--dry-run"], { SLOTFLOW_RETENTION: "12h" });
  t.is(r.code, 1);
  const lines = r.err.split("\n").filter((l) => l !== "");
  t.is(lines.length, 1, r.err);
  t.regex(lines[0]!, /^error: .*SLOTFLOW_RETENTION must be at least 24h/);
  const serve = await cli(["sweeper"], { SLOTFLOW_RETENTION: "2h" });
  t.is(serve.code, 1);
  t.regex(serve.err, /SLOTFLOW_RETENTION must be at least 24h/);
});

test.serial("with SLOTFLOW_RETENTION=off, purge says it keeps runs forever and deletes nothing", async (t) => {
  const before = await count("SELECT count(*) AS n FROM runs");
  const r = await cli(["purge"], { SLOTFLOW_RETENTION: "off" });
  t.is(r.code, 0, r.err);
  t.regex(r.out, /SLOTFLOW_RETENTION is off/);
  t.is(await count("SELECT count(*) AS n FROM runs"), before);
});
