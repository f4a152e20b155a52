/**
 * The inbox page in a real browser (v0.4 "People inside the company": `GET /inbox`; docs/inbox.md):
 * headless Chromium through playwright-core against one real `slotflow serve`, signed in with a
 * principal's bearer JWT sent by the browser context (the page asks signed-in.ts only, so a session
 * cookie signs in the same way). Not signed in: 303 to the sign-in with the way back. Signed in:
 * each task with its title (a link to its task page), workflow, run state, since when, deadline as
 * a date and a countdown, open or waiting on which predecessors; counts; the filter and order in
 * the URL; keyset pages by link; usable by keyboard alone and without JavaScript; axe-core finds
 * no serious or critical violation at 360 px and 1280 px; no request leaves the server; the
 * token never appears in the page. Screenshots: test/artifacts/inbox-{phone,desktop}.png.
 * Fixture: test/fixtures/inbox.flow.
 */
import test from "ava";
import AxeBuilder from "@axe-core/playwright";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { ARTIFACTS, DESKTOP, launchBrowser, PHONE } from "../helpers/browser.js";
import { dropDatabase } from "../helpers/db.js";
import { deployFixture, principalJwt, startRun, uniqueTitle } from "../helpers/callback.js";
import { request, startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;
let base: string;
let browser: Browser;
/** A principal of its own for this file: `owner` of every run, in role `team`. */
const owner = uniqueTitle("pageowner");
const team = uniqueTitle("pageteam");
const titles: string[] = [];
const runIds: string[] = [];

test.before(async () => {
  [cluster, browser] = await Promise.all([startCluster("inboxpage"), launchBrowser()]);
  base = cluster.baseUrl;
  await deployFixture(base, "inbox.flow");
  for (let i = 0; i < 3; i++) {
    const title = uniqueTitle(`<b>req${i}</b>`);
    titles.push(title);
    runIds.push(await startRun(base, "InboxDemo", { req: { title, owner, shards: 0, team }, signers: [] }));
  }
});

test.after.always(async () => {
  await browser?.close();
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

interface Signed {
  context: BrowserContext;
  page: Page;
  token: string;
  /** Every URL the page requested. */
  requests: string[];
}

async function signedIn(path: string, opts: { viewport?: { width: number; height: number }; javaScriptEnabled?: boolean } = {}): Promise<Signed> {
  const token = await principalJwt(owner, [team]);
  const context = await browser.newContext({
    viewport: opts.viewport ?? DESKTOP,
    javaScriptEnabled: opts.javaScriptEnabled ?? true,
    extraHTTPHeaders: { authorization: `Bearer ${token}` },
  });
  const page = await context.newPage();
  const requests: string[] = [];
  page.on("request", (r) => requests.push(r.url()));
  const res = await page.goto(base + path);
  if (!res || res.status() !== 200) throw new Error(`${path} answered ${res?.status()}`);
  return { context, page, token, requests };
}

test("not signed in: 303 to the sign-in, with the way back", async (t) => {
  const res = await fetch(`${base}/inbox?order=deadline&workflow=InboxDemo`, { headers: { accept: "text/html" }, redirect: "manual" });
  t.is(res.status, 303);
  t.is(res.headers.get("location"), `/auth/login?returnTo=${encodeURIComponent("/inbox?order=deadline&workflow=InboxDemo")}`);
});

test("each task: its title as a link to its task page, workflow, run state, since when, deadline and countdown, open or waiting on what; counts", async (t) => {
  const { page, context, token, requests } = await signedIn("/inbox");
  t.is(await page.title(), "Inbox");
  t.is(await page.locator("#counts").innerText(), "6 tasks: 3 open, 3 waiting on earlier steps.");
  const items = page.locator("ol.tasks > li");
  t.is(await items.count(), 6);
  for (let i = 0; i < 3; i++) {
    const link = page.getByRole("link", { name: `Approve ${titles[i]}` });
    t.is(await link.getAttribute("href"), `/inbox/tasks/${runIds[i]}/approve`, "the author's text is shown as text, the link is the task page");
    const item = page.locator("ol.tasks > li", { has: link });
    const text = await item.innerText();
    t.regex(text, /Workflow\s+InboxDemo/);
    t.regex(text, /Run state\s+Open/);
    t.regex(text, /Status\s+Open/);
    t.regex(text, /Open since\s+\d{1,2} \w+ \d{4} at \d{2}:\d{2} UTC \([\w ]+ ago\)/);
    t.regex(text, /Deadline\s+\d{1,2} \w+ \d{4} at \d{2}:\d{2} UTC \(in (1 d 23 h|2 d 0 h)\)/);
    t.truthy(await item.locator("time[datetime]").first().getAttribute("datetime"));
  }
  const waiting = page.locator("ol.tasks > li", { hasText: "Answer: Review" });
  t.is(await waiting.count(), 3);
  t.regex(await waiting.first().innerText(), /Status\s+Waiting on approve\n/, "an empty fan-out (no signers) waits on nothing");
  t.regex(await waiting.first().innerText(), /Deadline\s+None/);
  const html = await page.content();
  t.false(html.includes(token), "the bearer token is never written into the page");
  t.false(html.includes("<b>req"), "author text is escaped");
  t.true(requests.every((u) => u.startsWith(base)), requests.join("\n"));
  await context.close();
});

test("the filter and the order live in the URL; keyset pages by link, with and without JavaScript", async (t) => {
  for (const javaScriptEnabled of [true, false]) {
    const { page, context, requests } = await signedIn("/inbox?limit=2", { javaScriptEnabled });
    await page.getByLabel("Workflow").selectOption("InboxDemo");
    await page.getByLabel("Order").selectOption("deadline");
    await page.getByRole("button", { name: "Show" }).click();
    await page.waitForURL(/order=deadline/);
    const url = new URL(page.url());
    t.is(url.searchParams.get("workflow"), "InboxDemo");
    t.is(url.searchParams.get("order"), "deadline");
    t.is(url.searchParams.get("limit"), "2");
    const seen: string[] = [];
    for (let i = 0; i < 5; i++) {
      seen.push(...(await page.locator("ol.tasks h2").allInnerTexts()));
      const next = page.getByRole("link", { name: "Next page" });
      if ((await next.count()) === 0) break;
      await next.click();
      await page.waitForLoadState();
      t.true((await page.getByRole("link", { name: "First page" }).count()) === 1);
    }
    t.deepEqual(seen, [...titles.map((x) => `Approve ${x}`), "Answer: Review", "Answer: Review", "Answer: Review"], "soonest deadline first; every task once");
    t.is(await page.getByLabel("Order").inputValue(), "deadline");
    t.true(requests.every((u) => u.startsWith(base)));
    await context.close();
  }
});

test("keyboard only: Tab reaches the two views' links, the filters, then each task's link in order, and Enter opens it", async (t) => {
  const { page, context } = await signedIn("/inbox");
  const focused = () =>
    page.evaluate<string>(`(() => {
      const el = document.activeElement;
      if (!el) return "";
      return el.tagName === "A" ? "a:" + el.getAttribute("href") : el.tagName.toLowerCase() + ":" + (el.getAttribute("name") ?? el.textContent.trim());
    })()`);
  const order: string[] = [];
  for (let i = 0; i < 11; i++) {
    await page.keyboard.press("Tab");
    order.push(await focused());
  }
  // issue 43 item 4: "To do" and "Done (last 30 days)" come first, as plain links
  t.deepEqual(order.slice(0, 5), ["a:/inbox", "a:/inbox?view=done", "select:workflow", "select:order", "button:Show"]);
  const links = await page.locator("ol.tasks a").evaluateAll((as) => as.map((a) => `a:${a.getAttribute("href")}`));
  t.is(links.length, 6);
  t.deepEqual(order.slice(5), links, "then each task's link, in the page's order");
  await page.keyboard.press("Shift+Tab");
  await page.keyboard.press("Enter");
  await page.waitForURL(/\/inbox\/tasks\//);
  t.true(page.url().startsWith(`${base}/inbox/tasks/`));
  await context.close();
});

test("a bad address says what is wrong, as a page (400)", async (t) => {
  const token = await principalJwt(owner, [team]);
  const res = await request(base, "GET", "/inbox?cursor=nonsense", { token });
  t.is(res.status, 400);
  t.regex(res.text, /\?cursor: not a cursor this server gave/);
  t.regex(res.text, /<a href="\/inbox">Open your inbox<\/a>/);
});

test("axe-core finds no serious or critical violation at 360 px and at 1280 px", async (t) => {
  for (const [name, viewport] of [["phone", PHONE], ["desktop", DESKTOP]] as const) {
    const { page, context } = await signedIn("/inbox?limit=4", { viewport });
    await page.screenshot({ path: join(ARTIFACTS, `inbox-${name}.png`), fullPage: true });
    const result = await new AxeBuilder({ page }).analyze();
    const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
    t.deepEqual(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`), [], name);
    const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
    t.true(overflow <= 0, `${name}: no horizontal scrolling`);
    await context.close();
  }
});
