/**
 * The README's session, over real HTTP against a real `slotflow serve` process on real PostgreSQL
 * and Redis: deploy the examples, start a VendorApproval run, copy the link from the printed
 * email, POST the decision, see the run in Approved. Then the link's promises: a second POST
 * answers 410, GET answers 405 with Allow: POST without spending it, and the token is in no log
 * line, no table (pg_dump) and no Redis key.
 */
import test from "ava";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { Redis } from "ioredis";
import { launchBrowser } from "../helpers/browser.js";
import { dropDatabase } from "../helpers/db.js";
import { ADMIN_TOKEN, eventually, printedLinks, request, ROOT, startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;

test.before(async () => {
  cluster = await startCluster("readme", { args: ["--deploy", "examples"], env: { SLOTFLOW_DEV_SIGN_IN: "1" } }); // as `npm start` sets it
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

/** Splits captured output into log lines (JSON records) and the rest (printed emails). */
function logLines(output: string[]): string[] {
  return output.filter((l) => l.startsWith("{"));
}

test.serial("a vendor approves through the emailed link; the link is then spent, and the token was never stored or logged", async (t) => {
  const base = cluster.baseUrl;
  const started = await request(base, "POST", "/api/workflows/VendorApproval/runs", {
    token: ADMIN_TOKEN,
    json: { vendor: { name: "Acme", contactEmail: "ap@acme.example" }, amount: 1200 },
  });
  t.is(started.status, 201, started.text);
  t.like(started.body, { version: 1, state: "Review", status: "running" });
  const runId = started.body.id as string;

  const [url] = await eventually(async () => {
    const links = printedLinks(cluster.output());
    return links.length > 0 ? links : null;
  });
  t.true(url.startsWith(`${base}/api/workflow/callback/`));
  const token = url.split("/").pop()!;
  const path = new URL(url).pathname;

  // GET never spends the link and never says whether the token exists.
  const get = await request(base, "GET", path);
  t.is(get.status, 405);
  t.is(get.headers.get("allow"), "POST");
  t.is(get.body.code, "method-not-allowed");
  const getUnknown = await request(base, "GET", "/api/workflow/callback/unknown-token");
  t.is(getUnknown.status, 405);
  t.deepEqual(getUnknown.body, get.body);

  const posted = await request(base, "POST", path, { json: { ok: true, note: "Looks right" } });
  t.is(posted.status, 200, posted.text);
  t.like(posted.body, { status: "completed" }); // v0.4: with its receipt
  t.regex(String((posted.body as { receipt?: unknown } | undefined)?.receipt), /^[\w-]+\.[\w-]+\.[\w-]+$/);
  // the README shows this answer with every member it has (issue 38 defect 4: it lacked the receipt)
  const readme = readFileSync(`${ROOT}/README.md`, "utf8");
  const shownAnswer = /curl -s -X POST "\$LINK"[^\n]*\n# → (\{"status":"completed"[^\n]*)/.exec(readme)?.[1] ?? "";
  t.deepEqual([...shownAnswer.matchAll(/"(\w+)":/g)].map((m) => m[1]).sort(), Object.keys(posted.body).sort(), shownAnswer);

  const again = await request(base, "POST", path, { json: { ok: true, note: "Looks right" } });
  t.is(again.status, 410);
  t.is(again.body.code, "link-burned");
  t.is(again.headers.get("content-type"), "application/problem+json");

  const shown = await request(base, "GET", `/api/runs/${runId}`, { token: ADMIN_TOKEN });
  t.is(shown.status, 200);
  t.like(shown.body, { state: "Approved", status: "finished", workflow: "VendorApproval" });
  t.is(shown.body.entities.vendor.reviewNote, "Looks right");
  t.is(shown.body.entities.vendor.approvalUrl, `${base}/api/workflow/callback/[redacted]`);

  // The token is in no log line...
  await eventually(async () => cluster.output().some((l) => l.includes('"msg":"email printed (SMTP_URL is not set)"')));
  const logs = logLines(cluster.output());
  t.true(logs.length > 5);
  t.false(logs.some((l) => l.includes(token)), "a log line contains the token");
  t.true(logs.some((l) => l.includes("/api/workflow/callback/[redacted]")), "the access log shows the redacted path");
  // ...in no row of any table...
  const dump = execFileSync("pg_dump", ["--data-only", cluster.databaseUrl], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  t.true(dump.includes(runId));
  t.false(dump.includes(token), "pg_dump contains the token");
  // ...and in no Redis key or value of this cluster's queues.
  const redis = new Redis(cluster.env.REDIS_URL!);
  try {
    const keys = await redis.keys(`${cluster.env.SLOTFLOW_QUEUE_PREFIX}:*`);
    t.true(keys.length > 0);
    for (const key of keys) {
      t.false(key.includes(token));
      const type = await redis.type(key);
      const dumped = type === "string" ? await redis.get(key) : type === "hash" ? JSON.stringify(await redis.hgetall(key)) : type === "list" ? JSON.stringify(await redis.lrange(key, 0, -1)) : type === "zset" ? JSON.stringify(await redis.zrange(key, "0", "-1")) : type === "stream" ? JSON.stringify(await redis.xrange(key, "-", "+")) : type === "set" ? JSON.stringify(await redis.smembers(key)) : "";
      t.false((dumped ?? "").includes(token), `Redis key ${key} holds the token`);
    }
  } finally {
    redis.disconnect();
  }
});

test.serial("the README's inbox session: the development sign-in as fiona (finance), the task in /inbox marked as development, answered in Chromium, answeredBy on the run", async (t) => {
  const started = await request(cluster.baseUrl, "POST", "/api/workflows/VendorApproval/runs", {
    token: ADMIN_TOKEN,
    json: { vendor: { name: "Acme Inbox", contactEmail: "ap@acme.example" }, amount: 1200 },
  });
  t.is(started.status, 201);
  const runId = (started.body as { id: string }).id;
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    await page.goto(`${cluster.baseUrl}/inbox`);
    t.is(new URL(page.url()).pathname, "/auth/login");
    await page.getByLabel("User id").fill("fiona");
    await page.getByLabel("Email (optional)").fill("fiona@example.com");
    await page.getByLabel("Roles (optional)").fill("finance");
    await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Sign in" }).click()]);
    t.is(new URL(page.url()).pathname, "/inbox");
    t.regex(await page.getByRole("note").innerText(), /Development sign-in — not for production/);
    await Promise.all([page.waitForNavigation(), page.getByRole("link", { name: /Approve Acme Inbox\?/ }).click()]);
    t.is(new URL(page.url()).pathname, `/inbox/tasks/${runId}/decision`);
    t.regex(await page.getByRole("note").innerText(), /Development sign-in — not for production/);
    await page.getByRole("group", { name: "Do you approve this vendor?" }).getByLabel("Yes").check();
    await page.getByLabel("Note for our finance team").fill("Bank details verified");
    await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Send answer" }).click()]);
    t.regex(await page.locator("body").innerText(), /Answered by you at/);
  } finally {
    await browser.close();
  }
  const run = await request(cluster.baseUrl, "GET", `/api/runs/${runId}`, { token: ADMIN_TOKEN });
  const body = run.body as { state: string; slots: { alias: string; answeredBy: unknown }[] };
  t.is(body.state, "Approved");
  t.deepEqual(body.slots.find((s) => s.alias === "decision")?.answeredBy, { via: "principal", id: "fiona", email: "fiona@example.com" });
});
