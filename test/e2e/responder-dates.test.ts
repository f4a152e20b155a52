/**
 * Dates and numbers on the responder page, in headless Chromium against one real `slotflow serve`
 * (language reference, "Types" and "The responder page"): a `date` parameter is a date picker
 * sending `YYYY-MM-DD`; a `datetime` asks no seconds and its offset defaults to the browser's;
 * numbers the page shows (Title, Intro) are written for the browser's locale with `Intl`, while the
 * JSON sent and stored is unchanged. Fixture: test/fixtures/responder-dates.flow.
 */
import test from "ava";
import { useBrowserSuite } from "../helpers/browser-suite.js";
import { DESKTOP } from "../helpers/browser.js";
import { showRun, startRun, uniqueTitle } from "../helpers/callback.js";
import { linkIn, waitForEmail } from "../helpers/mail.js";

const suite = useBrowserSuite(test, "rdates", ["responder-dates.flow"]);

async function begin(prefix: string) {
  const title = uniqueTitle(prefix);
  const runId = await startRun(suite.base, "RpDates", { order: { title, contact: `${title}@example.test`, amount: 25000, price: 2.5 } });
  const url = linkIn(await waitForEmail(() => suite.cluster.output(), `confirm ${title}`));
  return { runId, url, title };
}

test.serial("in Kolkata with a German browser: a date picker, a datetime without seconds at +05:30, numbers as 25.000 and 2,5", async (t) => {
  const { runId, url, title } = await begin("kolkata");
  const context = await suite.browser.newContext({ viewport: DESKTOP, locale: "de-DE", timezoneId: "Asia/Kolkata" });
  const page = await context.newPage();
  await page.goto(url);
  t.is(await page.locator("h1").innerText(), `Confirm ${title}`);
  t.is(await page.locator(".intro").innerText(), "Order of 25.000 USD at 2,5 USD each.");

  const delivery = page.getByLabel("Delivery date", { exact: true });
  t.is(await delivery.getAttribute("type"), "date", "a date picker");
  const pickup = page.getByLabel("Pickup time", { exact: true });
  t.is(await pickup.getAttribute("type"), "datetime-local");
  t.not(await pickup.getAttribute("step"), "1", "no seconds asked");
  // v0.5: a German browser gets slotflow's own words in German (the author's labels stay as written)
  const offset = page.getByLabel("Pickup time: Abstand zu UTC");
  t.is(await offset.inputValue(), "+05:30", "the browser's offset is preselected");

  await delivery.fill("2026-12-01");
  await pickup.fill("2026-12-01T09:30");
  const sent = page.waitForRequest((r) => r.method() === "POST");
  await page.getByRole("button", { name: "Antwort senden" }).click();
  const body = JSON.parse((await sent).postData() ?? "{}");
  t.deepEqual(body, { delivery: "2026-12-01", pickup: "2026-12-01T09:30:00+05:30" });
  await page.locator("#outcome").filter({ hasText: "Erledigt" }).waitFor({ timeout: 15_000 });
  const order = (await showRun(suite.base, runId)).entities.order;
  t.is(order.delivery, "2026-12-01");
  t.is(new Date(order.pickup).toISOString(), "2026-12-01T04:00:00.000Z");
  t.is(order.amount, 25000, "the JSON keeps the plain number");
  await context.close();
});

test.serial("in New York (winter) with an English browser: offset −05:00, numbers as 25,000 and 2.5", async (t) => {
  const { url } = await begin("newyork");
  const context = await suite.browser.newContext({ viewport: DESKTOP, locale: "en-US", timezoneId: "America/New_York" });
  const page = await context.newPage();
  await page.goto(url);
  t.is(await page.locator(".intro").innerText(), "Order of 25,000 USD at 2.5 USD each.");
  const offset = page.getByLabel("Pickup time: offset from UTC");
  // The offset follows the day chosen: New York is −04:00 in July, −05:00 in December.
  await page.getByLabel("Pickup time", { exact: true }).fill("2027-07-01T09:30");
  t.is(await offset.inputValue(), "-04:00");
  await page.getByLabel("Pickup time", { exact: true }).fill("2027-12-01T09:30");
  t.is(await offset.inputValue(), "-05:00");
  // Once the person picks an offset, it stays theirs.
  await offset.selectOption("Z");
  await page.getByLabel("Pickup time", { exact: true }).fill("2027-07-02T09:30");
  t.is(await offset.inputValue(), "Z");
  await context.close();
});
