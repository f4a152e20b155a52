/**
 * Pages in the responder's language (issue 42; docs/languages.md), in headless Chromium
 * (playwright-core) against one real `slotflow serve` with branding on (SLOTFLOW_BRAND_NAME,
 * SLOTFLOW_BRAND_LOGO, SLOTFLOW_BRAND_COLOR). Each browser context sets `locale`, which sets the
 * Accept-Language Chromium sends, and a time zone:
 *
 * - de, ja and ar: the page's own words, `<html lang>`, `dir` (rtl for ar), the decimal, the bool
 *   and the datetime of the Intro in the language (the datetime in the browser's time zone), a
 *   submitted answer with a field error first and "done" in the language; axe-core finds no
 *   serious or critical violation; every request stays on slotflow's origin, the logo included;
 * - the Arabic page mirrors (the submit button sits at the right edge); a 360 px screenshot of it
 *   is written to test/artifacts/ (docs/images/responder-page-ar.png is a copy);
 * - `?lang=` overrides Accept-Language; the response varies on Accept-Language;
 * - the forward form on a German page mails the colleague in German.
 * Fixture: test/fixtures/languages.flow.
 */
import test from "ava";
import { join } from "node:path";
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "playwright-core";
import { useBrowserSuite } from "../helpers/browser-suite.js";
import { ARTIFACTS, PHONE } from "../helpers/browser.js";
import { startRun, uniqueTitle } from "../helpers/callback.js";
import { linkIn, parseEmails, waitForEmail } from "../helpers/mail.js";
import { ROOT } from "../helpers/server.js";

const BRAND = "ACME Procurement";
const suite = useBrowserSuite(test, "langbrowser", ["languages.flow"], {
  SLOTFLOW_BRAND_NAME: BRAND,
  SLOTFLOW_BRAND_LOGO: join(ROOT, "test", "fixtures", "brand", "logo.svg"),
  SLOTFLOW_BRAND_COLOR: "#0b4f6c",
});

const DUE = "2026-12-24T15:30:00Z";

async function begin(prefix: string): Promise<{ title: string; url: string }> {
  const title = uniqueTitle(prefix);
  await startRun(suite.base, "Lang", { job: { title, contact: `${title}@example.test`, amount: 1250000.5, urgent: true, due: DUE } });
  return { title, url: linkIn(await waitForEmail(() => suite.cluster.output(), `review ${title}`)) };
}

/** A page opened with `locale` and `timezoneId`, recording every request's URL. */
async function open(url: string, locale: string, timezoneId: string, viewport = PHONE): Promise<{ page: Page; requests: string[] }> {
  const context = await suite.browser.newContext({ locale, timezoneId, viewport });
  const page = await context.newPage();
  const requests: string[] = [];
  page.on("request", (r) => requests.push(r.url()));
  await page.goto(url);
  return { page, requests };
}

async function noSeriousViolation(t: import("ava").ExecutionContext, page: Page, name: string): Promise<void> {
  const result = await new AxeBuilder({ page }).analyze();
  const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  t.deepEqual(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`), [], name);
  const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
  t.is(overflow, 0, `${name}: no horizontal scrolling`);
}

const CASES = [
  {
    locale: "de-DE",
    lang: "de",
    dir: "ltr",
    timezoneId: "Europe/Berlin",
    send: "Antwort senden",
    yes: "Ja",
    quantity: "Quantity",
    amount: "1.250.000,5",
    urgent: "urgent Ja",
    due: /24\. Dezember 2026 um 16:30 MEZ/,
    required: "„Ok“ ist erforderlich: Bitte beantworten Sie es.",
    checkFields: "Bitte prüfen Sie die unten markierten Felder.",
    done: "Erledigt — Ihre Antwort wurde gespeichert. Sie können diese Seite schließen.",
    askedBy: `Anfrage von ${BRAND}`,
    // the Requires refusal: the author's variant for the language (Arabic has none: the default wording)
    requires: "Höchstens 100 Stück, nicht 500.",
  },
  {
    locale: "ja-JP",
    lang: "ja",
    dir: "ltr",
    timezoneId: "Asia/Tokyo",
    send: "回答を送信",
    yes: "はい",
    quantity: "Quantity",
    amount: "1,250,000.5",
    urgent: "urgent はい",
    due: /2026年12月25日 0:30 JST|2026年12月25日 00:30 JST/,
    required: "「Ok」は必須です。回答してください。",
    checkFields: "下の印の付いた項目を確認してください。",
    done: "完了 — 回答を記録しました。このページは閉じてかまいません。",
    askedBy: `${BRAND} からの依頼`,
    // the Requires refusal: the author's variant for the language (Arabic has none: the default wording)
    requires: "100 個までです (500 個ではありません)。",
  },
  {
    locale: "ar-EG",
    lang: "ar",
    dir: "rtl",
    timezoneId: "Africa/Cairo",
    send: "إرسال الإجابة",
    yes: "نعم",
    quantity: "Quantity",
    amount: new Intl.NumberFormat("ar", { maximumFractionDigits: 20 }).format(1250000.5),
    urgent: "urgent نعم",
    due: new RegExp(new Intl.DateTimeFormat("ar", { day: "numeric", month: "long", year: "numeric" , timeZone: "Africa/Cairo" }).formatToParts(new Date(DUE)).find((p) => p.type === "month")!.value),
    required: "«Ok» مطلوب: يُرجى الإجابة عنه.",
    checkFields: "يُرجى التحقق من الحقول المُعلَّمة أدناه.",
    done: "تم — سُجّلت إجابتك. يمكنك إغلاق هذه الصفحة.",
    askedBy: `الطلب من ${BRAND}`,
    // the Requires refusal: the author's variant for the language (Arabic has none: the default wording)
    requires: "At most 100 items, not 500.",
  },
] as const;

for (const c of CASES) {
  test.serial(`${c.lang}: the page speaks ${c.locale}'s language — words, lang, dir, numbers, Yes/No, the date in the browser's time zone; an answer is refused then done; axe clean; nothing leaves the origin`, async (t) => {
    const { url } = await begin(`lang-${c.lang}`);
    const { page, requests } = await open(url, c.locale, c.timezoneId);
    t.is(await page.getAttribute("html", "lang"), c.lang);
    t.is(await page.getAttribute("html", "dir"), c.dir);
    t.is(await page.locator("#asked-by").innerText(), c.askedBy);
    t.is(await page.locator("#brand").innerText(), BRAND);
    const intro = await page.locator(".intro").innerText();
    t.true(intro.includes(c.amount), `${intro} has ${c.amount}`);
    t.true(intro.includes(c.urgent), `${intro} has ${c.urgent}`);
    t.regex(intro, c.due);
    t.is(await page.locator("nav.languages a[aria-current]").getAttribute("hreflang"), c.lang);
    await noSeriousViolation(t, page, `${c.lang} form`);
    if (c.lang === "ar") {
      // mirrored: the submit button starts at the right edge of the form
      const form = (await page.locator("form#answer").boundingBox())!;
      const button = (await page.getByRole("button", { name: c.send }).boundingBox())!;
      t.true(Math.abs(form.x + form.width - (button.x + button.width)) < 2, "the button sits at the inline start, on the right");
      await page.screenshot({ path: join(ARTIFACTS, "responder-page-ar.png"), fullPage: true });
    }
    // only the quantity: the bool is missing → the field error in the language
    await page.getByLabel(c.quantity).fill("3");
    await page.getByRole("button", { name: c.send }).click();
    // the check sentence above the fields (v0.5), in the language; the field's own error beside it
    await page.locator("#check-fields").waitFor();
    t.is(await page.locator("#check-fields").innerText(), c.checkFields);
    t.is(await page.locator("#err-ok").innerText(), c.required);
    await page.getByRole("radio", { name: c.yes }).check();
    // too many: the Requires refusal in the page's language (the problem's `wordings`)
    await page.getByLabel(c.quantity).fill("500");
    await page.getByRole("button", { name: c.send }).click();
    await page.locator("#outcome.error").waitFor();
    t.is(await page.locator("#outcome").innerText(), c.requires);
    await page.getByLabel(c.quantity).fill("3");
    await page.getByRole("button", { name: c.send }).click();
    await page.locator("#outcome.done").waitFor();
    t.is(await page.locator("#outcome").innerText(), c.done);
    await noSeriousViolation(t, page, `${c.lang} done`);
    t.true(requests.length >= 3, "the page, the logo and the posts");
    t.true(requests.some((r) => r.endsWith("/brand/logo.svg")), "the logo is loaded from slotflow's origin");
    t.deepEqual(requests.filter((r) => !r.startsWith(suite.base)), [], "no request leaves the origin");
    await page.context().close();
  });
}

test.serial("?lang= overrides Accept-Language; the answer varies on Accept-Language; the default is English", async (t) => {
  const { url } = await begin("lang-query");
  const { page } = await open(`${url}?lang=fr`, "de-DE", "UTC");
  t.is(await page.getAttribute("html", "lang"), "fr");
  t.true(await page.getByRole("button", { name: "Envoyer la réponse" }).isVisible());
  await page.getByRole("link", { name: "日本語" }).click();
  t.is(await page.getAttribute("html", "lang"), "ja");
  await page.context().close();
  const res = await fetch(url, { headers: { accept: "text/html", "accept-language": "pt-BR, es;q=0.5" } });
  t.regex(res.headers.get("vary") ?? "", /Accept-Language/);
  t.regex(await res.text(), /<html lang="es" dir="ltr">/);
  const plain = await fetch(url, { headers: { accept: "text/html" } });
  t.regex(await plain.text(), /<html lang="en" dir="ltr">/);
});

test.serial("the forward form on a German page mails the colleague in German", async (t) => {
  const { title, url } = await begin("lang-fwd");
  const context = await suite.browser.newContext({ locale: "de-DE", javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(url);
  await page.getByLabel("Deren E-Mail-Adresse").fill(`kollege-${title}@example.test`);
  await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Weitergeben" }).click()]);
  t.is(await page.getByRole("heading", { level: 1 }).textContent(), "Dieser Link wurde weitergegeben");
  t.is(await page.getAttribute("html", "lang"), "de");
  let mail;
  for (let i = 0; i < 300 && !(mail = parseEmails(suite.cluster.output()).find((m) => m.to === `kollege-${title}@example.test`)); i++) await new Promise((r) => setTimeout(r, 50));
  t.truthy(mail, "the forward mail was printed");
  // v0.5: the forward mail names who passed the request on
  t.regex(mail!.body, /^lang-fwd-[0-9a-f]+@example\.test hat diese Anfrage an Sie weitergegeben:/);
  t.regex(mail!.body, /Hier antworten: http/);
  t.regex(mail!.body, /Der Link funktioniert einmal/);
  await context.close();
});
