/**
 * Issue 28 item 1: cross-site request forgery through the queue dashboard, and command jobs that
 * slotflow did not add.
 *
 * In a real Chromium (playwright-core) signed in to /admin/queues with HTTP Basic, pages served by
 * two other local servers — another site (`localhost`) and the same host on another port (same
 * site, other origin) — auto-post Bull Board's "add job" form with a cancel command for a running
 * run: refused, no job added, the run still running. A command job put straight into Redis
 * (BullMQ's Queue.add under the cluster's prefix) is refused by the worker at once, not retried,
 * and recorded as a `command-unsigned` incident on the run. The dashboard's own page still reads
 * and retries failed jobs; every other change is refused.
 */
import test from "ava";
import { Queue, type ConnectionOptions, type Job } from "bullmq";
import { Redis } from "ioredis";
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { CommandSigner } from "../../src/queue/signature.js";
import { launchBrowser } from "../helpers/browser.js";
import { deployFixture, showRun, startRun, uniqueTitle } from "../helpers/callback.js";
import { dropDatabase, sql } from "../helpers/db.js";
import { ADMIN_TOKEN, eventually, request, startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;
let browser: Browser;
let redis: Redis;
let commands: Queue;
const servers: Server[] = [];

test.before(async () => {
  cluster = await startCluster("dashcsrf", { roles: ["web", "worker"] });
  await deployFixture(cluster.baseUrl, "callback-basic.flow");
  browser = await launchBrowser();
  redis = new Redis(cluster.env.REDIS_URL!, { maxRetriesPerRequest: null });
  commands = new Queue("commands", { connection: redis as ConnectionOptions, prefix: cluster.env.SLOTFLOW_QUEUE_PREFIX });
});

test.after.always(async () => {
  for (const s of servers) await new Promise((r) => s.close(r));
  await commands?.close();
  redis?.disconnect();
  await browser?.close();
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`;

/**
 * The command job `id` once BullMQ has recorded it finished: `finishedOn` and `failedReason` are
 * written in the same script that moves it to the failed set, so a job read with `finishedOn` set
 * carries its reason.
 */
async function finishedJob(id: string): Promise<Job> {
  return eventually(async () => {
    const j = await commands.getJob(id);
    return j?.finishedOn ? j : null;
  }, 30_000);
}

async function runningRun(prefix: string): Promise<string> {
  const title = uniqueTitle(prefix);
  const runId = await startRun(cluster.baseUrl, "CbBasic", { job: { title, contact: `${title}@example.test`, handled: 0 } });
  const run = await showRun(cluster.baseUrl, runId);
  if (run.status !== "running") throw new Error(`the run is ${run.status}, not running`);
  return runId;
}

/** Serves `html` at `/` on 127.0.0.1 (any port); resolves the port. */
async function serve(html: string): Promise<number> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(html);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return (server.address() as AddressInfo).port;
}

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

/** A page that auto-posts Bull Board's "add job" form (both field spellings) to the dashboard. */
function attackPage(runId: string, commandId: string, reason: string): string {
  const action = `${cluster.baseUrl}/admin/queues/api/queues/commands/add`;
  const fields: Record<string, string> = {
    name: "cancel",
    "data[kind]": "cancel",
    "data[commandId]": commandId,
    "data[runId]": runId,
    "data[reason]": reason,
    "data[actor]": "attacker",
    "options[jobId]": commandId,
  };
  const inputs = Object.entries(fields)
    .map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`)
    .join("");
  return `<!doctype html><html><body onload="document.forms[0].submit()"><form method="POST" action="${esc(action)}">${inputs}</form></body></html>`;
}

test.serial("in Chromium signed in to the dashboard, a page on another origin that auto-posts an add-job form changes nothing", async (t) => {
  t.timeout(90_000);
  const context = await browser.newContext({ httpCredentials: { username: "operator", password: ADMIN_TOKEN } });
  try {
    // sign in: the browser now holds the Basic credentials for the dashboard
    const page = await context.newPage();
    t.is((await page.goto(`${cluster.baseUrl}/admin/queues`))?.status(), 200);
    for (const host of ["localhost", "127.0.0.1"]) {
      const runId = await runningRun(`csrf-${host}`);
      const commandId = randomUUID();
      const reason = `forged by a page on ${host}`;
      const port = await serve(attackPage(runId, commandId, reason));
      const posted = page.waitForResponse((r) => r.url().endsWith("/admin/queues/api/queues/commands/add"));
      await page.goto(`http://${host}:${port}/`);
      const answer = await posted;
      t.is(answer.status(), 403, `${host}: ${await answer.text()}`);
      t.is((await answer.json()).code, "cross-site-request");
      await sleep(1500); // time for a worker to apply a job, were one added
      t.is(await commands.getJob(commandId), undefined, `${host}: no job added`);
      const run = await showRun(cluster.baseUrl, runId);
      t.is(run.status, "running", host);
      t.false(run.history.some((h) => h.kind === "run-cancelled"), host);
    }
    const all = await commands.getJobs(["waiting", "active", "delayed", "completed", "failed", "prioritized"]);
    t.true(all.length > 0, "the starts went through the queue");
    t.deepEqual(all.filter((j) => j.data?.kind !== "start").map((j) => j.data), [], "no job but the runs' starts");
  } finally {
    await context.close();
  }
});

test.serial("a command job put straight into Redis is refused by the worker at once, recorded as an incident on the run, and applies nothing", async (t) => {
  t.timeout(60_000);
  const runId = await runningRun("forged");
  const commandId = randomUUID();
  // no signature, and then a signature under a key the cluster does not hold
  const forged = { kind: "cancel", commandId, runId, reason: "forged straight into Redis", actor: "attacker" };
  await commands.add("cancel", forged, { jobId: commandId, attempts: 5, backoff: { type: "fixed", delay: 10 } });
  const otherId = randomUUID();
  await commands.add("cancel", new CommandSigner(["not-the-cluster-key"]).signed({ ...forged, commandId: otherId }), { jobId: otherId, attempts: 5 });
  for (const id of [commandId, otherId]) {
    // Wait for the recorded fact — the job's own record saying it finished — not for a state read
    // after an earlier snapshot of the job (the snapshot could predate the failure: issue 39).
    const job = await finishedJob(id);
    t.is(await job.getState(), "failed");
    t.regex(job.failedReason ?? "(no failedReason)", /^command job refused: /);
    // Failed is final: a retry (5 attempts, 10 ms apart) would have left it delayed or waiting.
    t.is(job.attemptsStarted, 1, "not retried");
  }
  for (const id of [commandId, otherId]) {
    const refusals = () => cluster.output().filter((l) => l.includes("command job refused: not signed by slotflow") && l.includes(id));
    await eventually(async () => refusals().length > 0); // the worker's log line, read from its pipe
    t.is(refusals().length, 1, "refused once");
  }
  const run = await showRun(cluster.baseUrl, runId);
  t.is(run.status, "running");
  t.false(run.history.some((h) => h.kind === "run-cancelled"));
  const incidents = await sql<{ code: string; command: string; message: string }>(cluster.databaseUrl, "SELECT code, command, message FROM incidents WHERE run_id = $1 ORDER BY id", [runId]);
  t.is(incidents.length, 2, JSON.stringify(incidents));
  t.deepEqual(incidents.map((i) => [i.code, i.command]), [["command-unsigned", "cancel"], ["command-unsigned", "cancel"]]);
  t.true(incidents.some((i) => /the job carries no signature/.test(i.message) && i.message.includes(commandId)));
  t.true(incidents.some((i) => /its signature does not verify/.test(i.message) && i.message.includes(otherId)));
  t.false(incidents.some((i) => i.message.includes("not-the-cluster-key")));
  const [applied] = await sql<{ n: string }>(cluster.databaseUrl, "SELECT count(*) AS n FROM applied_commands WHERE id = ANY($1::text[])", [[commandId, otherId]]);
  t.is(Number(applied?.n), 0);
});

test.serial("a signed command's data copied under another job id is refused too", async (t) => {
  const runId = await runningRun("copied");
  const signed = new CommandSigner([cluster.env.SLOTFLOW_SEAL_KEY!]).signed({ kind: "cancel", commandId: randomUUID(), runId, reason: "copied", actor: "attacker" });
  const jobId = randomUUID();
  await commands.add("cancel", signed, { jobId });
  const job = await finishedJob(jobId);
  t.is(await job.getState(), "failed");
  t.regex(job.failedReason ?? "(no failedReason)", /job id is not its command id/);
  t.is((await showRun(cluster.baseUrl, runId)).status, "running");
});

test.serial("over HTTP: only a same-origin retry carrying the dashboard header is accepted; every other change is refused", async (t) => {
  const origin = cluster.baseUrl;
  const auth = { authorization: basic("ops", ADMIN_TOKEN) };
  const retryFailed = "/admin/queues/api/queues/commands/retry/failed";
  const refusals: [string, string, Record<string, string>, number][] = [
    ["PUT", retryFailed, { ...auth, "x-slotflow-dashboard": "1" }, 403], // Basic without Origin
    ["PUT", retryFailed, { ...auth, origin: "http://localhost:1", "x-slotflow-dashboard": "1" }, 403],
    ["PUT", retryFailed, { ...auth, origin, "sec-fetch-site": "same-site", "x-slotflow-dashboard": "1" }, 403],
    ["PUT", retryFailed, { ...auth, origin, "sec-fetch-site": "same-origin" }, 403], // no header
    ["PUT", retryFailed, { ...auth, origin, "x-slotflow-dashboard": "1", "content-type": "application/x-www-form-urlencoded", "content-length": "3" }, 403],
    ["POST", "/admin/queues/api/queues/commands/add", { ...auth, origin, "x-slotflow-dashboard": "1", "content-type": "application/json" }, 405],
    ["PUT", "/admin/queues/api/queues/commands/empty", { ...auth, origin, "x-slotflow-dashboard": "1" }, 405],
    ["PUT", "/admin/queues/api/queues/commands/pause", { ...auth, origin, "x-slotflow-dashboard": "1" }, 405],
    ["PUT", "/admin/queues/api/queues/commands/retry/completed", { ...auth, origin, "x-slotflow-dashboard": "1" }, 405],
    ["PATCH", "/admin/queues/api/queues/commands/x/update-data", { ...auth, origin, "x-slotflow-dashboard": "1", "content-type": "application/json" }, 405],
  ];
  for (const [method, path, headers, status] of refusals) {
    const body = headers["content-length"] === "3" ? "a=b" : headers["content-type"] === "application/json" ? JSON.stringify({ name: "cancel", data: {} }) : undefined;
    const res = await request(cluster.baseUrl, method, path, { headers, body });
    t.is(res.status, status, `${method} ${path} ${JSON.stringify(headers)}: ${res.text}`);
    t.regex(res.headers.get("content-type") ?? "", /^application\/problem\+json/);
  }
  const ok = await request(cluster.baseUrl, "PUT", retryFailed, { headers: { ...auth, origin, "sec-fetch-site": "same-origin", "x-slotflow-dashboard": "1" } });
  t.is(ok.status, 200, ok.text);
  const script = await request(cluster.baseUrl, "PUT", retryFailed, { token: ADMIN_TOKEN, headers: { "x-slotflow-dashboard": "1" } });
  t.is(script.status, 200, `a bearer-token script needs no Origin: ${script.text}`);
});

test.serial("the dashboard's own page still reads the queues and retries a failed job in Chromium", async (t) => {
  t.timeout(180_000); // bounds for a busy 2-core machine: each wait ends as soon as its fact is recorded
  const runId = await runningRun("retry");
  const commandId = randomUUID();
  await commands.add("cancel", { kind: "cancel", commandId, runId, reason: "refused, then retried", actor: "test" }, { jobId: commandId });
  const failed = await eventually(async () => {
    const j = await commands.getJob(commandId);
    return (await j?.getState()) === "failed" ? j : null;
  }, 60_000);
  const firstFinished = failed!.finishedOn!;
  const context = await browser.newContext({ httpCredentials: { username: "operator", password: ADMIN_TOKEN }, viewport: { width: 1280, height: 900 } });
  try {
    const page = await context.newPage();
    const res = await page.goto(`${cluster.baseUrl}/admin/queues/queue/commands?status=failed`);
    t.is(res?.status(), 200);
    await page.getByText(commandId).first().waitFor({ timeout: 60_000 });
    // the job card's first icon button (⟳ retry: Bull Board 9.10.1 gives it no accessible name)
    await page.locator(`xpath=//*[normalize-space(text())="${commandId}"]/ancestor::*[.//button][1]//button`).first().click();
    const [put] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "PUT" && r.url().includes(`/${commandId}/retry`)),
      page.getByRole("button", { name: "Confirm" }).click(),
    ]);
    t.is(put.status(), 204, await put.text());
    t.is(put.request().headers()["x-slotflow-dashboard"], "1");
    // the worker took it again and refused it again (it was never signed)
    const again = await eventually(async () => {
      const j = await commands.getJob(commandId);
      return (await j?.getState()) === "failed" && j!.finishedOn! > firstFinished ? j : null;
    }, 60_000);
    t.regex(again!.failedReason, /^command job refused: /);
  } finally {
    await context.close();
  }
  t.is((await showRun(cluster.baseUrl, runId)).status, "running");
});
