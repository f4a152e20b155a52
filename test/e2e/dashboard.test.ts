/**
 * The queue dashboard (issue 9 §5 "Queue dashboard"): Bull Board at /admin/queues, signed in with
 * HTTP Basic (any user, the admin token as password), opened in a real headless Chromium
 * (Debian's /usr/bin/chromium through playwright-core). The screenshot is saved as a test artifact
 * (test/artifacts/dashboard.png).
 */
import test from "ava";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { dropDatabase } from "../helpers/db.js";
import { ADMIN_TOKEN, ROOT, request, startCluster, type Cluster } from "../helpers/server.js";

const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

let cluster: Cluster;
let browser: Browser;

test.before(async () => {
  cluster = await startCluster("dashboard");
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium", args: CHROMIUM_ARGS });
});

test.after.always(async () => {
  await browser?.close();
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`;

test("the dashboard refuses a request without the admin token as Basic password, asking the browser to sign in", async (t) => {
  const attempts: Record<string, string>[] = [{}, { authorization: basic("ops", "wrong") }, { authorization: "Bearer wrong" }];
  for (const headers of attempts) {
    for (const path of ["/admin/queues", "/admin/queues/api/queues", "/admin/queues/static/js/main.js"]) {
      const res = await request(cluster.baseUrl, "GET", path, { headers });
      t.is(res.status, 401, `${path} ${JSON.stringify(headers)}`);
      t.is(res.body?.code, "unauthorized");
      t.regex(res.headers.get("www-authenticate") ?? "", /^Basic realm="slotflow"/);
    }
  }
});

test("the dashboard's API lists the commands, mail and sweep queues to any user name with the admin token", async (t) => {
  const res = await request(cluster.baseUrl, "GET", "/admin/queues/api/queues", { headers: { authorization: basic("anyone", ADMIN_TOKEN) } });
  t.is(res.status, 200, res.text);
  t.deepEqual((res.body.queues as { name: string }[]).map((q) => q.name).sort(), ["commands", "mail", "sweep"]);
});

test("a script may open the dashboard with the admin bearer token instead", async (t) => {
  const res = await request(cluster.baseUrl, "GET", "/admin/queues", { token: ADMIN_TOKEN });
  t.is(res.status, 200);
  t.regex(res.headers.get("content-type") ?? "", /^text\/html/);
});

test("in a real browser: 401 without credentials; signed in, the page shows the three queues (screenshot saved)", async (t) => {
  const anonymous = await browser.newContext();
  try {
    const page = await anonymous.newPage();
    // With no credentials to offer, Chromium gives up on the Basic challenge (the navigation
    // rejects); the response it got is what counts.
    const answered = page.waitForResponse(`${cluster.baseUrl}/admin/queues`);
    await page.goto(`${cluster.baseUrl}/admin/queues`).catch(() => undefined);
    const res = await answered;
    t.is(res.status(), 401);
    t.regex((await res.allHeaders())["www-authenticate"] ?? "", /^Basic/);
  } finally {
    await anonymous.close();
  }
  const context = await browser.newContext({ httpCredentials: { username: "operator", password: ADMIN_TOKEN }, viewport: { width: 1280, height: 800 } });
  try {
    const page = await context.newPage();
    const res = await page.goto(`${cluster.baseUrl}/admin/queues`);
    t.is(res?.status(), 200);
    for (const name of ["commands", "mail", "sweep"]) {
      await page.getByRole("link", { name, exact: true }).first().waitFor({ timeout: 20_000 });
    }
    await page.getByText("Loading...").waitFor({ state: "hidden", timeout: 20_000 });
    const dir = join(ROOT, "test", "artifacts");
    mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: join(dir, "dashboard.png"), fullPage: true });
    t.pass();
  } finally {
    await context.close();
  }
});
