/**
 * The responder page in a real browser (issue 10 §1 "Tested in a real browser"): headless Chromium
 * through playwright-core against one real `slotflow serve`. A person opens the link from an email,
 * fills the form and sends it; refusals show next to the fields; a reload after success and a
 * second visit say the right thing; keyboard-only use works; a client without JavaScript is told
 * what is needed and spends nothing; axe-core finds no serious or critical violation at phone and
 * desktop widths. Screenshots: test/artifacts/responder-{phone,desktop}.png.
 * Fixture: test/fixtures/responder-page.flow.
 */
import test from "ava";
import AxeBuilder from "@axe-core/playwright";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { ARTIFACTS, DESKTOP, launchBrowser, PHONE } from "../helpers/browser.js";
import { dropDatabase } from "../helpers/db.js";
import { deployFixture, eventsOn, showRun, slotStatus, startRun, uniqueTitle } from "../helpers/callback.js";
import { linkIn, waitForEmail } from "../helpers/mail.js";
import { ADMIN_TOKEN, request, ROOT, startCluster, type Cluster } from "../helpers/server.js";
import { readFileSync } from "node:fs";

let cluster: Cluster;
let base: string;
let browser: Browser;

test.before(async () => {
  [cluster, browser] = await Promise.all([startCluster("rbrowser"), launchBrowser()]);
  base = cluster.baseUrl;
  await deployFixture(base, "responder-page.flow");
  const example = await request(base, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: readFileSync(join(ROOT, "examples", "vendor-approval.flow"), "utf8") });
  if (example.status !== 201) throw new Error(example.text);
});

test.after.always(async () => {
  await browser?.close();
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

async function begin(prefix: string, job: Record<string, unknown> = {}) {
  const title = uniqueTitle(prefix);
  const runId = await startRun(base, "RpPage", { job: { title, contact: `${title}@example.test`, vendor: "Acme Tools", maxQty: 100, ...job } });
  return {
    runId,
    link: async (alias: string) => linkIn(await waitForEmail(() => cluster.output(), `${alias} ${title}`)),
    show: () => showRun(base, runId),
  };
}

async function openPage(url: string, viewport = DESKTOP, javaScriptEnabled = true): Promise<Page> {
  const context = await browser.newContext({ viewport, javaScriptEnabled });
  const page = await context.newPage();
  await page.goto(url);
  return page;
}

const outcome = (page: Page) => page.locator("#outcome");

async function fillOrder(page: Page, opts: { qty?: string; due?: boolean } = {}): Promise<void> {
  await page.getByRole("group", { name: "Can you deliver this order?" }).getByLabel("Yes").check();
  await page.getByLabel("Message for the buyer").fill("We can ship on Monday.\nTwo boxes.");
  if (opts.qty !== "") await page.getByLabel("Quantity you can deliver").fill(opts.qty ?? "3");
  await page.getByLabel("Unit price (EUR)").fill("2.5");
  if (opts.due !== false) {
    await page.getByLabel("Delivery date and time", { exact: true }).fill("2026-12-01T09:30");
    await page.getByLabel("Delivery date and time: offset from UTC").selectOption("+01:00");
  }
  await page.getByLabel("Lead time", { exact: true }).fill("3");
  await page.getByLabel("Lead time: unit").selectOption("D");
  await page.getByRole("group", { name: "Tags" }).getByRole("button", { name: "Add an item" }).click();
  await page.getByLabel("Item", { exact: true }).fill("urgent");
  await page.getByRole("group", { name: "Pallet grid" }).getByRole("button", { name: "Add an item" }).click();
  await page.getByLabel("Item (as JSON)").fill("[1, 2]");
}

test.serial("a person opens the link from the email, fills every control and sends: the page says done and the run has the answer", async (t) => {
  const run = await begin("fill");
  const url = await run.link("order");
  const page = await openPage(url);
  t.is(await page.title(), "Confirm order for Acme Tools");
  await fillOrder(page);
  await page.screenshot({ path: join(ARTIFACTS, "responder-desktop.png"), fullPage: true });
  const sent = page.waitForRequest((r) => r.method() === "POST");
  await page.getByRole("button", { name: "Send answer" }).click();
  const request = await sent;
  t.regex(request.headers()["idempotency-key"] ?? "", /^[0-9a-f-]{36}$/, "an Idempotency-Key made by the page");
  t.is(request.headers()["content-type"], "application/json");
  await t.notThrowsAsync(outcome(page).filter({ hasText: "Done" }).waitFor({ timeout: 15_000 }));
  t.true(await page.getByRole("button", { name: "Send answer" }).isDisabled(), "the form is done");
  const job = (await run.show()).entities.job;
  t.is(job.ok, true);
  t.is(job.note, "We can ship on Monday.\nTwo boxes.");
  t.is(job.qty, 3);
  t.is(job.price, 2.5);
  t.is(new Date(job.due).toISOString(), "2026-12-01T08:30:00.000Z", "the chosen offset was sent");
  t.is(job.lead, "P3D");
  t.deepEqual(job.tags, ["urgent"]);
  t.deepEqual(job.grid, [[1, 2]], "a list of lists, typed as JSON");
  t.is(job.gift, null, "bool? left at 'No answer' is null");

  // A reload after success shows "done" (the page asks again under its own key), never "already used".
  await page.reload();
  await t.notThrowsAsync(outcome(page).filter({ hasText: "recorded" }).waitFor({ timeout: 15_000 }));
  t.regex(await page.locator("h1").innerText(), /Done/);
  // Somebody else's visit (no answer of theirs in this tab) is told the link was used.
  const other = await openPage(url);
  t.regex(await other.locator("h1").innerText(), /already been used/);
  t.is(await outcome(other).innerText(), "");
  await page.context().close();
  await other.context().close();
});

test.serial("the README session in a browser: the vendor opens the emailed link, approves with a note, and the run is Approved", async (t) => {
  const runId = await startRun(base, "VendorApproval", { vendor: { name: "Acme", contactEmail: "ap@acme.example" }, amount: 1200 });
  const mail = await waitForEmail(() => cluster.output(), "Approve Acme?");
  t.regex(mail.body, /^Open this link to answer: http/);
  const url = linkIn(mail);
  for (const [name, viewport] of [["phone", PHONE], ["desktop", DESKTOP]] as const) {
    const look = await openPage(url, viewport);
    t.is(await look.locator("h1").innerText(), "Approve Acme?");
    await look.screenshot({ path: join(ARTIFACTS, `vendor-approval-${name}.png`), fullPage: true });
    await look.context().close();
  }
  const page = await openPage(url, PHONE);
  await page.getByLabel("Yes").check();
  await page.getByLabel("Note for our finance team").fill("Bank details verified");
  await page.getByRole("button", { name: "Send answer" }).click();
  await t.notThrowsAsync(outcome(page).filter({ hasText: "Done" }).waitFor({ timeout: 15_000 }));
  await page.screenshot({ path: join(ARTIFACTS, "vendor-approval-done.png"), fullPage: true });
  const shown = await showRun(base, runId);
  t.is(shown.state, "Approved");
  t.is(shown.entities.vendor.reviewNote, "Bank details verified");
  await page.context().close();
});

test.serial("a refused answer shows each field's problem next to that field; the corrected answer goes through", async (t) => {
  const run = await begin("errors");
  const page = await openPage(await run.link("order"));
  await fillOrder(page, { qty: "", due: false });
  await page.getByRole("button", { name: "Send answer" }).click();
  await t.notThrowsAsync(page.locator("#err-qty").filter({ hasText: "required" }).waitFor({ timeout: 15_000 }));
  t.regex(await page.locator("#err-due").innerText(), /required/);
  t.true(await page.locator("#err-note").isHidden(), "no error on a field that was fine");
  t.is(await page.getByLabel("Quantity you can deliver").getAttribute("aria-invalid"), "true");
  t.regex((await page.getByLabel("Quantity you can deliver").getAttribute("aria-describedby")) ?? "", /err-qty/);
  t.regex(await page.locator("#check-fields").innerText(), /check the fields/, "above the fields (issue 38 defect 4)");
  t.is(slotStatus(await run.show(), "order"), "open", "a refusal changes nothing");

  // Requires (qty <= maxQty) refuses after the body check: the author's wording is shown, the link stays live.
  await page.getByLabel("Quantity you can deliver").fill("1000");
  await page.getByLabel("Delivery date and time", { exact: true }).fill("2026-12-01T09:30");
  await page.getByRole("button", { name: "Send answer" }).click();
  await t.notThrowsAsync(outcome(page).filter({ hasText: "We can take at most 100 items; you offered 1000." }).waitFor({ timeout: 15_000 }));
  t.true(await page.locator("#err-qty").isHidden(), "old field errors are cleared");

  await page.getByLabel("Quantity you can deliver").fill("7");
  await page.getByRole("button", { name: "Send answer" }).click();
  await t.notThrowsAsync(outcome(page).filter({ hasText: "Done" }).waitFor({ timeout: 15_000 }));
  t.is((await run.show()).entities.job.qty, 7);
  await page.context().close();
});

test.serial("keyboard only: Tab to the choice, Space, Tab, Enter sends; the outcome is announced in a live region", async (t) => {
  const run = await begin("keys");
  const page = await openPage(await run.link("plain"));
  await page.keyboard.press("Tab");
  t.is(await page.locator(":focus").getAttribute("value"), "true", "the first Tab reaches the Yes choice");
  await page.keyboard.press("Space");
  await page.keyboard.press("Tab");
  t.is(await page.locator(":focus").innerText(), "Send answer");
  await page.keyboard.press("Enter");
  await t.notThrowsAsync(outcome(page).filter({ hasText: "Done" }).waitFor({ timeout: 15_000 }));
  t.is(await outcome(page).getAttribute("aria-live"), "polite");
  t.is((await run.show()).entities.job.ok, true);
  await page.context().close();
});

test.serial("a retry after the connection dropped (the answer had been applied) shows done, not 'already used'", async (t) => {
  const run = await begin("dropped");
  const page = await openPage(await run.link("plain"));
  const keys: string[] = [];
  let first = true;
  await page.route("**/api/workflow/callback/**", async (route) => {
    keys.push(route.request().headers()["idempotency-key"] ?? "");
    if (!first) return route.continue();
    first = false;
    const answered = await route.fetch(); // the server applies the answer…
    t.is(answered.status(), 200);
    await route.abort("connectionreset"); // …and the browser never hears back
  });
  await page.getByLabel("No").check();
  await page.getByRole("button", { name: "Send answer" }).click();
  await t.notThrowsAsync(outcome(page).filter({ hasText: "connection dropped" }).waitFor({ timeout: 15_000 }));
  t.is((await run.show()).entities.job.ok, false, "the first request was applied");
  await page.getByRole("button", { name: "Send answer" }).click();
  await t.notThrowsAsync(outcome(page).filter({ hasText: "Done" }).waitFor({ timeout: 15_000 }));
  t.is(keys.length, 2);
  t.is(keys[0], keys[1], "the retry carries the same Idempotency-Key");
  t.is(eventsOn(await run.show(), "plain").length, 1, "applied once");
  await page.context().close();
});

test.serial("a client without JavaScript (a mail scanner that renders pages) is told what is needed and spends nothing", async (t) => {
  const run = await begin("nojs");
  const page = await openPage(await run.link("plain"), DESKTOP, false);
  t.regex(await page.locator("noscript, .notice").first().innerText(), /needs JavaScript/);
  t.true(await page.getByRole("button", { name: "Send answer" }).isDisabled());
  t.is(slotStatus(await run.show(), "plain"), "open");
  await page.context().close();
});

test.serial("at 360 px and at desktop width axe-core finds no serious or critical violation and nothing overflows", async (t) => {
  const run = await begin("axe");
  const url = await run.link("order");
  for (const [name, viewport] of [["phone", PHONE], ["desktop", DESKTOP]] as const) {
    const page = await openPage(url, viewport);
    await page.getByRole("group", { name: "Tags" }).getByRole("button", { name: "Add an item" }).click();
    const result = await new AxeBuilder({ page }).analyze();
    const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
    t.deepEqual(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`), [], name);
    const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
    t.is(overflow, 0, `${name}: no horizontal scrolling`);
    if (name === "phone") await page.screenshot({ path: join(ARTIFACTS, "responder-phone.png"), fullPage: true });
    await page.context().close();
  }
  // The page of a used link, too.
  await (await openPage(url)).context().close();
  const ended = await openPage(url.replace(/.$/, (c) => (c === "A" ? "B" : "A")), PHONE);
  const result = await new AxeBuilder({ page: ended }).analyze();
  t.deepEqual(result.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id), []);
  await ended.context().close();
});
