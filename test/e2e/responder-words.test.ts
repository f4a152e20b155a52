/**
 * The words a responder reads (issue 19 item 4), in headless Chromium against one real `slotflow
 * serve`: the page's heading is the author's `Title` (never the workflow's or event's internal
 * names), field errors name the field by its `@label`, and each state of a link — answered,
 * replaced by a newer link, closed, expired on <date>, not open yet, unknown — reads as a plain
 * sentence (src/web/page/wording.ts). The JSON API's problem details stay as they were.
 * Fixture: test/fixtures/responder-words.flow.
 */
import test from "ava";
import type { Browser, Page } from "playwright-core";
import { DESKTOP, launchBrowser, PHONE } from "../helpers/browser.js";
import { deployFixture, postLink, showRun, startRun, uniqueTitle } from "../helpers/callback.js";
import { dropDatabase } from "../helpers/db.js";
import { linkIn, waitForEmail } from "../helpers/mail.js";
import { eventually, startCluster, type Cluster } from "../helpers/server.js";
import { plainDate } from "../../src/web/page/wording.js";

let cluster: Cluster;
let browser: Browser;

test.before(async () => {
  [cluster, browser] = await Promise.all([startCluster("rwords"), launchBrowser()]);
  await deployFixture(cluster.baseUrl, "responder-words.flow");
});

test.after.always(async () => {
  await browser?.close();
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

async function begin() {
  const who = uniqueTitle("Ann");
  const runId = await startRun(cluster.baseUrl, "ExpenseApproval", { exp: { who, contact: `${who}@example.test`, url: null } });
  return { runId, who, link: async (alias: string) => linkIn(await waitForEmail(() => cluster.output(), `${alias} ${who}`)) };
}

async function open(url: string, viewport = PHONE): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  await page.goto(url);
  return page;
}

const INTERNAL = /ExpenseApproval|\bDecide\b|Pending|approved is|JSON|\bnull\b|\(boolean\)|\(string|·/;

test.serial("the heading is the author's Title; an empty submit names each field by its @label, in plain words", async (t) => {
  const run = await begin();
  const page = await open(await run.link("decision"));
  t.is(await page.locator("h1").innerText(), `Approve ${run.who}'s expenses?`);
  t.is(await page.title(), `Approve ${run.who}'s expenses?`);
  await page.getByRole("button", { name: "Send answer" }).click();
  await t.notThrowsAsync(page.locator("#err-approved").filter({ hasText: "required" }).waitFor({ timeout: 15_000 }));
  t.is(await page.locator("#err-approved").innerText(), "“Approve this expense?” is required: please answer it.");
  t.true(await page.locator("#err-reason").isHidden(), "an empty text is an answer (the empty string)");
  // above the fields, not under the button (issue 38 defect 4)
  t.is(await page.locator("#check-fields").innerText(), "Please check the fields marked below.");
  const [summary, firstField] = [await page.locator("#check-fields").boundingBox(), await page.locator("[data-param]").first().boundingBox()];
  t.true(summary!.y < firstField!.y, "the message is above the first field");
  t.is(await page.locator("#outcome").innerText(), "");
  const text = await page.locator("main").innerText();
  t.notRegex(text, INTERNAL, text);
  await page.context().close();
});

test.serial("a slot without Title is headed by its event, never by the workflow's internal name", async (t) => {
  const run = await begin();
  const page = await open(await run.link("bare"), DESKTOP);
  t.is(await page.locator("h1").innerText(), "Answer: Bare");
  t.notRegex(await page.locator("main").innerText(), /ExpenseApproval|·/);
  await page.context().close();
});

test.serial("every state of a link reads as a plain sentence: answered, replaced, closed, expired on <date>, not open yet, unknown", async (t) => {
  t.timeout(90_000);
  const run = await begin();
  const [decision, stale, extra, quick, later] = await Promise.all(["decision", "stale", "extra", "quick", "later"].map((a) => run.link(a)));

  const read = async (url: string) => {
    const page = await open(url);
    const words = { title: await page.locator("h1").innerText(), text: await page.locator("main").innerText() };
    await page.context().close();
    return words;
  };

  const notOpen = await read(later);
  t.is(notOpen.title, "Not open yet");
  t.regex(notOpen.text, /This question opens once earlier steps are done\./);

  const replaced = await read(stale);
  t.is(replaced.title, "This link was replaced");
  t.regex(replaced.text, /A newer link was sent to you for the same question, so this one no longer works\./);

  const unknown = await read(`${decision.slice(0, -6)}AAAAAA`);
  t.is(unknown.title, "This link does not work");
  t.regex(unknown.text, /No question matches this link\./);

  // The quick slot's 1 s deadline passes; the sweeper expires it.
  const expiredView = await eventually(async () => {
    const r = await showRun(cluster.baseUrl, run.runId);
    return r.slots.find((s) => s.alias === "quick")?.status === "expired" ? r : null;
  }, 30_000);
  const deadline = new Date(expiredView.slots.find((s) => s.alias === "quick")!.deadline as unknown as string);
  const expired = await read(quick);
  t.is(expired.title, "This link no longer works");
  t.regex(expired.text, new RegExp(`The time to answer ran out: this link expired on ${plainDate(deadline)}\\.`));
  t.regex(plainDate(deadline), /^\d{1,2} [A-Z][a-z]+ \d{4} at \d{2}:\d{2} UTC$/);

  const answer = await postLink(decision, { approved: true, reason: "fine" });
  t.is(answer.status, 200, answer.text);
  const answered = await read(decision);
  t.is(answered.title, "This link has already been used");
  t.regex(answered.text, /An answer was already sent through this link, and each link works once\./);

  const closed = await read(extra);
  t.is(closed.title, "This link no longer works");
  t.regex(closed.text, /The question this link was for is closed: the workflow run has finished\./);

  for (const words of [notOpen, replaced, unknown, expired, answered, closed]) t.notRegex(words.text, /slot|deadline has passed/, words.text);
});

test.serial("the JSON API's problem details are unchanged: API clients still read the parameter names and types", async (t) => {
  const run = await begin();
  const empty = await postLink(await run.link("decision"), {});
  t.is(empty.status, 422);
  t.regex(empty.body.detail as string, /^This response takes a JSON object with exactly these properties, all required: "approved" \(boolean\), "reason" \(string\)\./);
  t.deepEqual(
    (empty.body.errors as { name: string; problem: string }[]).map((e) => [e.name, e.problem]),
    [
      ["approved", "is required"],
      ["reason", "is required"],
    ],
  );
  const stale = await postLink(await run.link("stale"), { approved: true, reason: "x" });
  t.is(stale.status, 410);
  t.is(stale.body.code, "link-retired");
});
