/**
 * Times on the insiders' pages in the reader's time zone (interfaces.md "Pages in the responder's
 * language": datetime in the reader's time zone, without script UTC with the offset written;
 * "Answers people can trust": insiders' pages write times in the reader's zone). A real OpenID
 * provider (test/helpers/oidc-issuer.ts) gives the standard `zoneinfo` claim to some logins
 * (`berlin-…` Europe/Berlin, `tokyo-…` Asia/Tokyo, `badzone-…` a zone no one knows); people sign in
 * through it in headless Chromium against a real `slotflow serve`, and the inbox (`/inbox`), the
 * task page (before and after an answer) and the inbox's done view write each `<time>` in that
 * zone with the offset and the zone's name — server-rendered, the pages stay without script; the
 * task page's datetime offset starts on the zone's offset now, and `GET /auth/whoami` reports the
 * session's `zone`. No
 * `zoneinfo`, or one `Intl` does not know: UTC with the offset written, as before. The development
 * sign-in (a second `slotflow serve`, SLOTFLOW_DEV_SIGN_IN=1) takes a time zone too, and refuses one
 * `Intl` does not know.
 * Fixture: test/fixtures/reader-zone.flow.
 */
import test, { type ExecutionContext } from "ava";
import type { Browser, Page } from "playwright-core";
import { launchBrowser } from "../helpers/browser.js";
import { dropDatabase } from "../helpers/db.js";
import { deployFixture, startRun, uniqueTitle } from "../helpers/callback.js";
import { CLIENT_ID, signInAtIssuer, startIssuer, type TestIssuer } from "../helpers/oidc-issuer.js";
import { startCluster, type Cluster } from "../helpers/server.js";
import { SESSION_COOKIE, unseal } from "../../src/web/identity/session.js";

const SESSION_KEY = "reader-zone-session-key-0123456789abcdef01";

let idp: TestIssuer;
let cluster: Cluster;
let dev: Cluster;
let base: string;
let browser: Browser;

test.before(async () => {
  idp = await startIssuer();
  [cluster, dev, browser] = await Promise.all([
    startCluster("readerzone", {
      env: {
        SLOTFLOW_OIDC_ISSUER: idp.issuer,
        SLOTFLOW_OIDC_CLIENT_ID: CLIENT_ID,
        SLOTFLOW_OIDC_ROLES_CLAIM: "realm_access.roles",
        SLOTFLOW_SESSION_SECRET: SESSION_KEY,
      },
    }),
    startCluster("readerzonedev", { env: { SLOTFLOW_DEV_SIGN_IN: "1" } }),
    launchBrowser(),
  ]);
  base = cluster.baseUrl;
  idp.register(base);
  await Promise.all([deployFixture(base, "reader-zone.flow"), deployFixture(dev.baseUrl, "reader-zone.flow")]);
});

test.after.always(async () => {
  await browser?.close();
  for (const c of [cluster, dev]) {
    await c?.stop();
    if (c) await dropDatabase(c.databaseUrl);
  }
  await idp?.close();
});

/** A new run of ZoneDemo; its task's title. */
async function newTask(prefix: string): Promise<{ runId: string; title: string }> {
  const title = uniqueTitle(prefix);
  return { runId: await startRun(base, "ZoneDemo", { req: { title } }), title };
}

/** A new browser context (JavaScript off: these pages work without it) signed in at the provider as `login`, on `path`. */
async function signedInAt(login: string, path: string): Promise<Page> {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(`${base}${path}`);
  if (!page.url().startsWith(idp.issuer)) throw new Error(`expected the provider's login page, got ${page.url()}`);
  await signInAtIssuer(page, base, login);
  return page;
}

/** The session's sealed `tz` claim (the zone slotflow kept at sign-in), read with the test's key. */
async function sessionZone(page: Page): Promise<unknown> {
  const c = (await page.context().cookies(base)).find((x) => x.name === SESSION_COOKIE);
  const claims = await unseal([SESSION_KEY], "session", c?.value);
  if (!claims) throw new Error("no session cookie");
  return claims.tz;
}

/** Each `<time>` in `scope` as its ISO `datetime` and its text. */
async function timesIn(page: Page, selector: string): Promise<{ iso: string; text: string }[]> {
  return page.locator(`${selector} time`).evaluateAll((els) => els.map((e) => ({ iso: e.getAttribute("datetime") ?? "", text: (e.textContent ?? "").trim() })));
}

/** The UTC offset of `zone` at `iso`, minutes (from the zone's own rules, not from the page). */
function offsetMinutes(zone: string, iso: string): number {
  const d = new Date(iso);
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-US", { timeZone: zone, year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", hourCycle: "h23" })
      .formatToParts(d)
      .map((p) => [p.type, p.value]),
  );
  const local = Date.UTC(+parts.year!, +parts.month! - 1, +parts.day!, +parts.hour!, +parts.minute!);
  return Math.round((local - Math.floor(d.getTime() / 60_000) * 60_000) / 60_000);
}

/** An offset in minutes as the offset selector's values write it (RFC 3339): `+01:00`, `-03:30`, `Z`. */
function offsetValue(minutes: number): string {
  if (minutes === 0) return "Z";
  const a = Math.abs(minutes);
  return `${minutes < 0 ? "-" : "+"}${String(Math.floor(a / 60)).padStart(2, "0")}:${String(a % 60).padStart(2, "0")}`;
}

/** `GET /auth/whoami` with the page's session. */
async function whoami(page: Page): Promise<{ id: string; zone: unknown }> {
  return (await page.context().request.get(`${base}/auth/whoami`)).json();
}

/**
 * `time` is written in `zone` with the offset and the zone's name: its hour and minute are the
 * instant of its `datetime` moved by the zone's offset, and the offset written is that offset.
 */
function assertInZone(t: ExecutionContext, time: { iso: string; text: string }, zone: string, word = "at"): void {
  const m = new RegExp(`^(\\d{1,2})\\.? \\S+ \\d{4} ${word} (\\d\\d):(\\d\\d) GMT([+-]\\d{1,2})(?::(\\d\\d))? \\(${zone.replace("/", "\\/")}\\)$`).exec(time.text);
  if (!m) {
    t.fail(`${JSON.stringify(time.text)} is not a time in ${zone} with its offset`);
    return;
  }
  const offset = offsetMinutes(zone, time.iso);
  const sign = offset < 0 ? -1 : 1;
  t.is(Number(m[4]) * 60 + sign * Number(m[5] ?? 0), offset, `the offset written for ${time.iso}`);
  const local = new Date(new Date(time.iso).getTime() + offset * 60_000);
  t.is(`${m[2]}:${m[3]}`, local.toISOString().slice(11, 16), `the time of day in ${zone} for ${time.iso}`);
  t.is(Number(m[1]), local.getUTCDate(), `the day in ${zone} for ${time.iso}`);
}

/** `time` is written in UTC, as the pages write times without a zone. */
function assertUtc(t: ExecutionContext, time: { iso: string; text: string }): void {
  t.regex(time.text, /^\d{1,2} \w+ \d{4} at \d\d:\d\d UTC$/);
  t.is(time.text.match(/(\d\d:\d\d) UTC$/)?.[1], time.iso.slice(11, 16));
}

async function assertScriptless(t: ExecutionContext, page: Page): Promise<void> {
  const res = await page.request.get(page.url());
  t.notRegex(res.headers()["content-security-policy"] ?? "", /script-src/, "the page stays without script");
  t.false((await res.text()).includes("<script"), "no script element");
}

test.serial("zoneinfo Europe/Berlin: the inbox, the task page before and after the answer, and the done view write times in Berlin with the offset", async (t) => {
  const task = await newTask("berlin");
  const login = uniqueTitle("berlin-ann");
  const page = await signedInAt(login, "/inbox");
  t.is(await sessionZone(page), "Europe/Berlin", "the zone is kept in the sealed session");
  t.is((await whoami(page)).zone, "Europe/Berlin", "whoami reports the session's zone");

  // the inbox: since when and the deadline
  const link = page.getByRole("link", { name: `Approve ${task.title}` });
  const item = page.locator("ol.tasks > li", { has: link });
  const inboxTimes = await item.locator("time").evaluateAll((els) => els.map((e) => ({ iso: e.getAttribute("datetime") ?? "", text: (e.textContent ?? "").trim() })));
  t.is(inboxTimes.length, 2);
  for (const time of inboxTimes) {
    t.regex(time.iso, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, "datetime keeps the ISO instant");
    assertInZone(t, time, "Europe/Berlin");
  }
  await assertScriptless(t, page);

  // the task page: waiting since, deadline
  await Promise.all([page.waitForURL(/\/inbox\/tasks\//), link.click()]);
  const facts = await timesIn(page, "dl.facts");
  t.is(facts.length, 2);
  for (const time of facts) assertInZone(t, time, "Europe/Berlin");
  await assertScriptless(t, page);

  // the datetime's offset selector starts on Berlin's offset now (not UTC, as without a zone)
  t.is(await page.locator('select[name="due.offset"]').inputValue(), offsetValue(offsetMinutes("Europe/Berlin", new Date().toISOString())));
  // answer: a datetime given at 09:30 +01:00 is 08:30 UTC, and 09:30 in Berlin on 1 December
  await page.getByRole("group", { name: "Approve?" }).getByLabel("Yes").check();
  await page.getByLabel("Due at", { exact: true }).fill("2026-12-01T09:30");
  await page.locator('select[name="due.offset"]').selectOption("+01:00");
  await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Send answer" }).click()]);
  const outcome = await page.locator("#outcome").innerText();
  const at = /^Answered by you at (.+)\.$/.exec(outcome)?.[1] ?? outcome;
  const answerTimes = await timesIn(page, "#answer");
  t.deepEqual(answerTimes, [{ iso: "2026-12-01T08:30:00.000Z", text: "1 December 2026 at 09:30 GMT+1 (Europe/Berlin)" }]);
  t.regex(at, /^\d{1,2} \w+ \d{4} at \d\d:\d\d GMT\+[12] \(Europe\/Berlin\)$/, "when it was answered, in Berlin");

  // the done view: when, and the value answered
  await page.goto(`${base}/inbox?view=done`);
  const done = page.locator("ol.tasks > li", { has: page.getByRole("link", { name: `Approve ${task.title}` }) });
  const doneTimes = await done.locator("time").evaluateAll((els) => els.map((e) => ({ iso: e.getAttribute("datetime") ?? "", text: (e.textContent ?? "").trim() })));
  t.is(doneTimes.length, 2);
  assertInZone(t, doneTimes[0]!, "Europe/Berlin");
  t.deepEqual(doneTimes[1], { iso: "2026-12-01T08:30:00.000Z", text: "1 December 2026 at 09:30 GMT+1 (Europe/Berlin)" });
  await assertScriptless(t, page);
  await page.context().close();
});

test.serial("zoneinfo Asia/Tokyo on a German page: the language writes the date, the zone the time (GMT+9)", async (t) => {
  const task = await newTask("tokyo");
  const page = await signedInAt(uniqueTitle("tokyo-kai"), "/inbox?lang=de");
  t.is(await sessionZone(page), "Asia/Tokyo");
  const item = page.locator("ol.tasks > li", { has: page.getByRole("link", { name: `Approve ${task.title}` }) });
  const times = await item.locator("time").evaluateAll((els) => els.map((e) => ({ iso: e.getAttribute("datetime") ?? "", text: (e.textContent ?? "").trim() })));
  t.is(times.length, 2);
  for (const time of times) {
    t.regex(time.text, /GMT\+9 \(Asia\/Tokyo\)$/);
    assertInZone(t, time, "Asia/Tokyo", "um");
  }
  await page.context().close();
});

test.serial("no zoneinfo: the inbox and the task page write times in UTC with the offset, as before", async (t) => {
  const task = await newTask("nozone");
  const page = await signedInAt(uniqueTitle("plain-pat"), "/inbox");
  t.is(await sessionZone(page), undefined, "no zone kept");
  t.is((await whoami(page)).zone, null, "whoami: no zone");
  const link = page.getByRole("link", { name: `Approve ${task.title}` });
  const times = await page.locator("ol.tasks > li", { has: link }).locator("time").evaluateAll((els) => els.map((e) => ({ iso: e.getAttribute("datetime") ?? "", text: (e.textContent ?? "").trim() })));
  t.is(times.length, 2);
  for (const time of times) assertUtc(t, time);
  await Promise.all([page.waitForURL(/\/inbox\/tasks\//), link.click()]);
  const facts = await timesIn(page, "dl.facts");
  t.is(facts.length, 2);
  for (const time of facts) assertUtc(t, time);
  t.is(await page.locator('select[name="due.offset"]').inputValue(), "Z", "the datetime's offset starts on UTC, as before");
  await page.context().close();
});

test.serial("a zoneinfo no one knows (Mars/Olympus_Mons) is not kept: times in UTC with the offset", async (t) => {
  const task = await newTask("badzone");
  const page = await signedInAt(uniqueTitle("badzone-bo"), "/inbox");
  t.is(await sessionZone(page), undefined, "an unknown zone is not kept");
  const link = page.getByRole("link", { name: `Approve ${task.title}` });
  const times = await page.locator("ol.tasks > li", { has: link }).locator("time").evaluateAll((els) => els.map((e) => ({ iso: e.getAttribute("datetime") ?? "", text: (e.textContent ?? "").trim() })));
  t.is(times.length, 2);
  for (const time of times) assertUtc(t, time);
  t.false((await page.content()).includes("Mars"), "the claim is never written into the page");
  await Promise.all([page.waitForURL(/\/inbox\/tasks\//), link.click()]);
  for (const time of await timesIn(page, "dl.facts")) assertUtc(t, time);
  await page.context().close();
});

test.serial("the development sign-in takes a time zone: the inbox writes times there; a zone Intl does not know is refused with a 422 page", async (t) => {
  const title = uniqueTitle("devzone");
  await startRun(dev.baseUrl, "ZoneDemo", { req: { title } });
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(`${dev.baseUrl}/auth/login?returnTo=%2Finbox`);
  await page.getByLabel("User id").fill("dev-dana");
  await page.getByLabel("Roles (optional)").fill("finance");
  await page.getByLabel("Time zone (optional)").fill("Mars/Base_Alpha");
  await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Sign in" }).click()]);
  t.is(await page.getByRole("alert").innerText(), "Enter an IANA time zone such as Europe/Berlin, or leave it empty.");
  t.is(await page.getByLabel("Time zone (optional)").inputValue(), "Mars/Base_Alpha", "the form keeps what was typed");
  t.is((await context.request.get(`${dev.baseUrl}/auth/whoami`)).status(), 401, "nobody signed in");

  await page.getByLabel("Time zone (optional)").fill("asia/tokyo");
  await Promise.all([page.waitForURL(`${dev.baseUrl}/inbox`), page.getByRole("button", { name: "Sign in" }).click()]);
  const item = page.locator("ol.tasks > li", { has: page.getByRole("link", { name: `Approve ${title}` }) });
  const times = await item.locator("time").evaluateAll((els) => els.map((e) => ({ iso: e.getAttribute("datetime") ?? "", text: (e.textContent ?? "").trim() })));
  t.is(times.length, 2);
  for (const time of times) assertInZone(t, time, "Asia/Tokyo");
  await context.close();
});
