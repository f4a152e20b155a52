/**
 * The responder page's "Send this to someone else" and its receipt, in headless Chromium
 * (playwright-core) against one real `slotflow serve` (v0.4 "Many responders, forwarding, and
 * receipts"; docs/responder-page.md).
 *
 * - Without JavaScript, the forward form posts (same origin, the page's CSRF token), lands back on
 *   the link's page which now says the link was passed on, and the new link is mailed.
 * - A bad address without JavaScript shows a page saying so, with the refusal's status.
 * - A slot without Forwardable shows no forward form.
 * - With JavaScript, a completed answer shows its receipt and offers it as a download.
 * Fixture: test/fixtures/forwarding.flow.
 */
import test from "ava";
import { useBrowserSuite } from "../helpers/browser-suite.js";
import type { Page } from "playwright-core";
import { DESKTOP } from "../helpers/browser.js";
import { postLink, startRun, uniqueTitle } from "../helpers/callback.js";
import { linkIn, parseEmails, waitForEmail } from "../helpers/mail.js";

const suite = useBrowserSuite(test, "fwbrowser", ["forwarding.flow"]);

async function begin(prefix: string) {
  const title = uniqueTitle(prefix);
  await startRun(suite.base, "Fwd", { job: { title, contact: `${title}@example.test`, handled: 0 } });
  return { title, link: async (alias: string) => linkIn(await waitForEmail(() => suite.cluster.output(), `${alias} ${title}`)) };
}

async function openPage(url: string, javaScriptEnabled: boolean): Promise<Page> {
  const context = await suite.browser.newContext({ viewport: DESKTOP, javaScriptEnabled, acceptDownloads: true });
  const page = await context.newPage();
  await page.goto(url);
  return page;
}

test.serial("without JavaScript, the forward form sends the link on: the page then says it was passed on, and the new link is mailed", async (t) => {
  const { title, link } = await begin("fwb-ok");
  const url = await link("review");
  const page = await openPage(url, false);
  await page.getByLabel("Their email address").fill(`colleague-${title}@example.test`);
  const [response] = await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Send it to them" }).click()]);
  t.is(response?.status(), 410, "back on the link's own page, which is now retired");
  t.is(await page.getByRole("heading", { level: 1 }).textContent(), "This link was passed on");
  const until = Date.now() + 15_000;
  let mail;
  while (!(mail = parseEmails(suite.cluster.output()).find((m) => m.to === `colleague-${title}@example.test`)) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  t.truthy(mail);
  t.is(mail!.subject, `Review ${title}`);
  t.is((await postLink(linkIn(mail!), { ok: true, note: "the colleague" })).status, 200);
  await page.context().close();
});

test.serial("without JavaScript, a bad address shows a page that says so, and the link stays live", async (t) => {
  const { link } = await begin("fwb-bad");
  const url = await link("review");
  const page = await openPage(url, false);
  // the browser's own check would stop "not an address"; an address the server refuses gets past it
  await page.getByLabel("Their email address").fill("a..b@example.test");
  const [response] = await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Send it to them" }).click()]);
  t.is(response?.status(), 422);
  t.is(await page.getByRole("heading", { level: 1 }).textContent(), "Not sent");
  t.regex((await page.locator("main").textContent()) ?? "", /not an email address/);
  t.is((await postLink(url, { ok: true, note: "still mine" })).status, 200);
  await page.context().close();
});

test.serial("a slot without Forwardable shows no forward form", async (t) => {
  const { link } = await begin("fwb-none");
  const page = await openPage(await link("fixed"), false);
  t.is(await page.locator("form#forward").count(), 0);
  t.is(await page.getByRole("heading", { level: 1 }).textContent(), (await page.title()));
  await page.context().close();
});

test.serial("with JavaScript, a completed answer shows its receipt and offers it as a download", async (t) => {
  const { link } = await begin("fwb-receipt");
  const page = await openPage(await link("review"), true);
  await page.getByRole("group", { name: "Ok" }).getByLabel("Yes").check();
  await page.getByLabel("Note").fill("looks good");
  await page.getByRole("button", { name: "Send answer" }).click();
  await page.locator("#outcome.done").waitFor();
  const receipt = await page.locator("#receipt-text").inputValue();
  t.regex(receipt, /^[\w-]+\.[\w-]+\.[\w-]+$/);
  t.true(await page.locator("#receipt").isVisible());
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download the receipt" }).click()]);
  t.is(download.suggestedFilename(), "receipt.jws");
  const path = await download.path();
  const { readFileSync } = await import("node:fs");
  t.is(readFileSync(path!, "utf8"), receipt);
  // a reload serves the "already used" page; this tab's own answer is asked again with its key and shows the same receipt
  await page.reload();
  await page.locator("#outcome.done").waitFor();
  t.is(await page.locator("#receipt-text").inputValue(), receipt);
  await page.context().close();
});
