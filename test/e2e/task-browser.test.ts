/**
 * The task page in a real browser (interfaces.md v0.4 "People inside the company"): headless
 * Chromium through playwright-core against one real `slotflow serve`. A principal (an HS256 bearer
 * JWT sent as a header on every request of the browser context) opens a task page, fills the form
 * and sends it — with JavaScript off, since the page has no script (on where axe-core must run); refusals show beside their
 * fields; a principal with a role the task does not accept gets the 403 page; axe-core finds no
 * serious or critical violation at 360 px and 1280 px; no request leaves 127.0.0.1; no token is on
 * any page. Screenshots: test/artifacts/task-{phone,desktop}.png. Fixture: test/fixtures/task-page.flow.
 */
import test from "ava";
import { useBrowserSuite } from "../helpers/browser-suite.js";
import AxeBuilder from "@axe-core/playwright";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { ARTIFACTS, DESKTOP, PHONE } from "../helpers/browser.js";
import { eventsOn, principalJwt, showRun, startRun, uniqueTitle } from "../helpers/callback.js";

/** Every URL any page of the suite requested. */
const requested: string[] = [];

const suite = useBrowserSuite(test, "taskbrowser", ["task-page.flow"]);

async function begin(prefix: string) {
  const title = uniqueTitle(prefix);
  const runId = await startRun(suite.base, "TkPage", { job: { title, contact: `${title}@example.test`, vendor: "Acme Tools", maxQty: 10 }, reviewers: ["ann"] });
  return { runId, url: (alias: string) => `${suite.base}/inbox/tasks/${runId}/${alias}` };
}

/** A page signed in as `sub` with `roles` (bearer JWT on every request), JavaScript off unless asked. */
async function signedInPage(sub: string, roles: string[], viewport = DESKTOP, javaScriptEnabled = false): Promise<Page> {
  const jwt = await principalJwt(sub, roles);
  const context = await suite.browser.newContext({ viewport, javaScriptEnabled, extraHTTPHeaders: { authorization: `Bearer ${jwt}` } });
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  page.on("request", (r) => requested.push(r.url()));
  return page;
}

async function fill(page: Page, qty = "3"): Promise<void> {
  await page.getByRole("group", { name: "Can you deliver this order?" }).getByLabel("Yes").check();
  await page.getByLabel("Message for the buyer").fill("We can ship on Monday.");
  await page.getByLabel("Quantity you can deliver").fill(qty);
  await page.getByLabel("Unit price (EUR)").fill("2.5");
  await page.getByLabel("Delivery date and time", { exact: true }).fill("2026-12-01T09:30");
  await page.getByLabel("Delivery date and time: offset from UTC").selectOption("+01:00");
  await page.getByLabel("Lead time", { exact: true }).fill("3");
  await page.getByLabel("Lead time: unit").selectOption("D");
  await page.getByLabel("Item", { exact: true }).fill("urgent");
}

async function noSeriousViolation(t: import("ava").ExecutionContext, page: Page, name: string): Promise<void> {
  const result = await new AxeBuilder({ page }).analyze();
  const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  t.deepEqual(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`), [], name);
  const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
  t.is(overflow, 0, `${name}: no horizontal scrolling`);
}

test.serial("a principal opens the task page, fills the form without JavaScript and sends it: 'Answered by you', the history names the principal", async (t) => {
  const run = await begin("fill");
  const page = await signedInPage("alice", ["buyer"]);
  const res = await page.goto(run.url("order"));
  t.is(res?.status(), 200);
  t.is(await page.title(), "Confirm order for Acme Tools");
  t.is(await page.locator("#candidates").innerText(), "anyone with the role “buyer”");
  await fill(page);
  const [answer] = await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Send answer" }).click()]);
  t.is(answer?.status(), 200);
  t.is(page.url(), run.url("order"), "303 back to the task page");
  t.regex(await page.locator("#outcome").innerText(), /^Answered by you at \d{1,2} \w+ \d{4} at \d\d:\d\d UTC\.$/);
  const view = await showRun(suite.base, run.runId);
  const order = view.slots.find((s) => s.alias === "order") as unknown as { status: string; answeredBy: unknown };
  t.is(order.status, "completed");
  t.deepEqual(order.answeredBy, { via: "principal", id: "alice", email: "alice@example.test" });
  const event = eventsOn(view, "order")[0];
  t.is(event?.data.principal, "alice");
  t.deepEqual(event?.data.answeredBy, { via: "principal", id: "alice", email: "alice@example.test" });
  t.is(view.entities.job?.qty, 3);
  t.deepEqual(view.entities.job?.tags, ["urgent"]);
  t.notRegex(await page.content(), /sfl_|callback\//);
  await page.context().close();
});

test.serial("refusals show beside their fields, values kept; the Requires else words above the form; nothing applied", async (t) => {
  const run = await begin("refuse");
  const page = await signedInPage("bob", ["buyer"], DESKTOP, true); // axe-core runs as a page script
  await page.goto(run.url("order"));
  await page.getByLabel("Unit price (EUR)").fill("2.5");
  const [refused] = await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Send answer" }).click()]);
  t.is(refused?.status(), 422);
  t.is(await page.locator("#err-qty").innerText(), "“Quantity you can deliver” is required: please answer it.");
  t.is(await page.locator("#err-ok").innerText(), "“Can you deliver this order?” is required: please answer it.");
  t.is(await page.getByLabel("Quantity you can deliver").getAttribute("aria-invalid"), "true");
  t.is(await page.getByLabel("Unit price (EUR)").inputValue(), "2.5", "the values typed are kept");
  t.true(await page.locator("#err-price").isHidden());
  await noSeriousViolation(t, page, "422 page");

  await fill(page, "11");
  const [over] = await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Send answer" }).click()]);
  t.is(over?.status(), 409);
  t.is(await page.getByRole("alert").innerText(), "We can take at most 10 items; you offered 11.");
  t.is((await showRun(suite.base, run.runId)).slots.find((s) => s.alias === "order")?.status, "open");
  await page.context().close();
});

test.serial("a principal with a role the task does not accept gets the 403 page saying why", async (t) => {
  const run = await begin("forbidden");
  const page = await signedInPage("carol", ["clerk"], PHONE, true);
  const res = await page.goto(run.url("order"));
  t.is(res?.status(), 403);
  t.is(await page.getByRole("heading", { level: 1 }).innerText(), "You cannot answer this task");
  t.regex(await page.locator("#why").innerText(), /anyone with the role “buyer”; you are signed in as carol@example\.test \(your roles: clerk\)/);
  t.is(await page.locator("form").count(), 0);
  await noSeriousViolation(t, page, "403 page");
  await page.context().close();
});

test.serial("at 360 px and 1280 px axe-core finds no serious or critical violation on the task page and nothing overflows; with JavaScript on it works the same", async (t) => {
  const run = await begin("axe");
  for (const [name, viewport] of [["phone", PHONE], ["desktop", DESKTOP]] as const) {
    const page = await signedInPage("dave", ["buyer"], viewport, true);
    await page.goto(run.url("order"));
    await noSeriousViolation(t, page, name);
    await page.screenshot({ path: join(ARTIFACTS, `task-${name}.png`), fullPage: true });
    await page.context().close();
  }
  const page = await signedInPage("dave", ["buyer"], PHONE, true);
  await page.goto(run.url("order"));
  await fill(page);
  await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Send answer" }).click()]);
  t.regex(await page.locator("#outcome").innerText(), /^Answered by you at /);
  await noSeriousViolation(t, page, "answered page");
  await page.context().close();
});

test.serial("no request of any page left 127.0.0.1", (t) => {
  t.true(requested.length > 10);
  t.deepEqual(requested.filter((u) => new URL(u).hostname !== "127.0.0.1"), []);
});
